/** One indexing batch: tools whose vectors were stored, texts encoded for them, time it took. */
interface Batch {
  tools: number;
  texts: number;
  ms: number;
}

/** Batches the rate is measured over: recent enough to follow the encoder, enough to be steady. */
const WINDOW = 20;

/**
 * The indexer's throughput: totals since start, and the rate of the last batches while working
 * (tools and texts per second of indexing, idle time excluded), from which a backlog's ETA follows.
 */
export class IndexThroughput {
  private readonly recent: Batch[] = [];
  tools = 0;
  texts = 0;

  /** Records one batch of `tools` stored with `texts` newly encoded in `ms`. */
  record(tools: number, texts: number, ms: number): void {
    this.tools += tools;
    this.texts += texts;
    this.recent.push({ tools, texts, ms });
    if (this.recent.length > WINDOW) this.recent.shift();
  }

  private rate(pick: (batch: Batch) => number): number | undefined {
    const ms = this.recent.reduce((sum, batch) => sum + batch.ms, 0);
    if (this.recent.length === 0 || ms <= 0) return undefined;
    return (this.recent.reduce((sum, batch) => sum + pick(batch), 0) * 1000) / ms;
  }

  /** Texts encoded per second of indexing over the last batches; undefined before the first. */
  get textsPerSecond(): number | undefined {
    return this.rate((batch) => batch.texts);
  }

  /** Tools indexed per second over the last batches; undefined before the first. */
  get toolsPerSecond(): number | undefined {
    return this.rate((batch) => batch.tools);
  }

  /** Seconds until `pending` tools are indexed at the recent rate; undefined while unknown. */
  etaSeconds(pending: number): number | undefined {
    if (pending === 0) return 0;
    const rate = this.toolsPerSecond;
    return rate === undefined || rate <= 0 ? undefined : Math.ceil(pending / rate);
  }
}
