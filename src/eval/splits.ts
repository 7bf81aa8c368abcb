/**
 * Deterministic splits of a dataset for the generality and abstention checks: chosen by a hash of
 * the tool name (or the query's position), so every run and every clone splits the same way and
 * nothing depends on the order of the files.
 */
import { createHash } from 'node:crypto';

/** A number in [0, 1) from the SHA-1 of `salt:text`. */
function hashUnit(text: string, salt: string): number {
  return createHash('sha1').update(`${salt}:${text}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** Whether the abstention check withholds this tool (a `share` of all tools, by name). */
export const withheld = (name: string, share: number): boolean => hashUnit(name, 'withhold') < share;

/** Which of two disjoint tool halves a tool belongs to (0 or 1, by name). */
export const toolHalf = (name: string): 0 | 1 => (hashUnit(name, 'half') < 0.5 ? 0 : 1);

/** How a request relates to the tools registered: all its relevant tools there, none, or some. */
type Presence = 'present' | 'absent' | 'partial';

export function presence(relevant: readonly string[], registered: ReadonlySet<string>): Presence {
  const there = relevant.filter((name) => registered.has(name)).length;
  return there === relevant.length ? 'present' : there === 0 ? 'absent' : 'partial';
}
