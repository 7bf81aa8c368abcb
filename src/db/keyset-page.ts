/**
 * One page of a keyset listing that read `limit + 1` rows: the page, and the key to pass for the
 * next one. That is the last row's key when more rows follow. When none follow, it is where a
 * windowed listing stopped examining (`examinedTo`: matching rows may remain past it), or null on
 * the last page.
 */
export function keysetPage<Row, Key>(rows: Row[], limit: number, keyOf: (row: Row) => Key, examinedTo?: Key): { rows: Row[]; next: Key | null } {
  const page = rows.slice(0, limit);
  if (rows.length > limit) return { rows: page, next: keyOf(page.at(-1)!) };
  return { rows: page, next: examinedTo ?? null };
}
