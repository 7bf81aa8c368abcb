/** Renders rows as a plain-text table with a header rule; cells are cut at `maxWidth`. */
export function renderTable(headers: string[], rows: string[][], maxWidth = 60): string {
  const cut = (cell: string) => (cell.length > maxWidth ? `${cell.slice(0, maxWidth - 1)}…` : cell);
  const cells = rows.map((row) => row.map((cell) => cut(cell.replace(/\s+/g, ' '))));
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((row) => row[i]?.length ?? 0)));
  const line = (row: string[]) => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n') + '\n';
}
