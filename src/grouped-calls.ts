import { FairQueue } from './fair-queue.js';

/** What a group's run says of each of its calls, in the order they were given. */
export type CallOutcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

interface Waiting<I, O> {
  input: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Calls that arrive while a group is running go together in the next group, one `run` for all of
 * them (at most `maxGroup`). A call that finds nothing running starts a group of one at once, so a
 * lone call waits for no timer and no one else; under load a group grows with the time a run takes,
 * and a round trip or a commit is shared instead of paid per call. A run that throws fails every
 * call of its group with that error. A group is composed in turns across owners (`ownerOf`: the
 * tenant), each owner's calls in the order they came: behind one tenant's flood of thousands of
 * waiting calls, another tenant's call goes in the next group, not after the whole flood.
 */
export class GroupedCalls<I, O> {
  private readonly queue = new FairQueue<Waiting<I, O>>(Number.POSITIVE_INFINITY);
  private running = false;

  constructor(
    /** Runs one group; returns one outcome per input, in order. */
    private readonly run: (inputs: I[]) => Promise<CallOutcome<O>[]>,
    private readonly maxGroup: number,
    /** Whose call it is; calls of one owner take turns with no one. */
    private readonly ownerOf: (input: I) => string = () => '',
  ) {
    if (!Number.isInteger(maxGroup) || maxGroup < 1) throw new RangeError(`maxGroup must be a positive integer, not ${maxGroup}`);
  }

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push(this.ownerOf(input), { input, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.size > 0) {
        const group: Waiting<I, O>[] = [];
        while (group.length < this.maxGroup && this.queue.size > 0) group.push(this.queue.shift()!);
        let outcomes: CallOutcome<O>[];
        try {
          outcomes = await this.run(group.map((w) => w.input));
        } catch (error) {
          for (const w of group) w.reject(error);
          continue;
        }
        group.forEach((w, i) => {
          const outcome = outcomes[i];
          if (outcome === undefined) w.reject(new Error(`a group of ${group.length} calls got ${outcomes.length} outcomes`));
          else if (outcome.ok) w.resolve(outcome.value);
          else w.reject(outcome.error);
        });
      }
    } finally {
      this.running = false;
    }
  }
}
