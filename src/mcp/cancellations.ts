import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

import type { Principal } from '../auth/principal.js';

/**
 * The /mcp requests running on this replica, by caller and JSON-RPC id. /mcp is stateless: a
 * client's `notifications/cancelled` arrives as a POST of its own, handled by a server of its own,
 * so the SDK cannot match it to the request it names; this registry does. Keys carry the caller's
 * tenant and subject, so a caller can only cancel its own requests.
 */
export class McpCancellations {
  private readonly running = new Map<string, Set<AbortController>>();

  /** Registers a request; `signal` aborts if the caller cancels it, `end` forgets it. */
  start(principal: Principal, id: RequestId): { signal: AbortSignal; end: () => void } {
    const key = keyOf(principal, id);
    const controller = new AbortController();
    const same = this.running.get(key) ?? new Set();
    same.add(controller);
    this.running.set(key, same);
    return {
      signal: controller.signal,
      end: () => {
        same.delete(controller);
        if (same.size === 0 && this.running.get(key) === same) this.running.delete(key);
      },
    };
  }

  /** Aborts the caller's running requests with this id; false when none runs here. */
  cancel(principal: Principal, id: RequestId, reason: string): boolean {
    const same = this.running.get(keyOf(principal, id));
    same?.forEach((controller) => controller.abort(new Error(reason)));
    return same !== undefined;
  }
}

const keyOf = (principal: Principal, id: RequestId): string => JSON.stringify([principal.tenant, principal.subject, id]);
