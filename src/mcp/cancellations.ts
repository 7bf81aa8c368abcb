import { createHash } from 'node:crypto';

import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * The /mcp requests running on this replica, by caller and JSON-RPC id. /mcp is stateless: a
 * client's `notifications/cancelled` arrives as a POST of its own, handled by a server of its own,
 * so the SDK cannot match it to the request it names; this registry does. The caller is its bearer
 * token (clients number their requests from 0, so agents of one tenant, or of one subject, reuse
 * ids), and a notification that matches more than one running request cancels none of them.
 */
export class McpCancellations {
  private readonly running = new Map<string, Set<AbortController>>();

  /** Registers a request; `signal` aborts if the caller cancels it, `end` forgets it. */
  start(token: string, id: RequestId): { signal: AbortSignal; end: () => void } {
    const key = keyOf(token, id);
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

  /** Aborts the caller's one running request with this id; false when none (or several) runs here. */
  cancel(token: string, id: RequestId, reason: string): boolean {
    const same = this.running.get(keyOf(token, id));
    if (same?.size !== 1) return false;
    same.forEach((controller) => controller.abort(new Error(reason)));
    return true;
  }
}

/** The token is hashed: the map holds no credential. */
const keyOf = (token: string, id: RequestId): string => `${createHash('sha256').update(token).digest('base64url')} ${JSON.stringify(id)}`;
