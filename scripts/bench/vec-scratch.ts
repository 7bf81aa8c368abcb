import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
const db = await PGlite.create({ dataDir: process.argv[2]!, extensions: { vector } });
const q = (await db.query<{ e: string }>('select embedding::text as e from tool_embeddings limit 1')).rows[0]!.e;
async function t(label: string, sqlText: string) {
  const ts: number[] = [];
  for (let i = 0; i < 7; i++) { const s = performance.now(); await db.query(sqlText, [q]); ts.push(performance.now() - s); }
  ts.sort((a, b) => a - b); console.log(label.padEnd(30), ts[3]!.toFixed(1), 'ms');
}
console.log((await db.query(`select pg_column_size(embedding) s, count(*) from tool_embeddings group by 1 order by 2 desc limit 3`)).rows);
console.log((await db.query(`select pg_relation_size('tool_embeddings') h, pg_total_relation_size('tool_embeddings') t`)).rows);
await t('count', 'select count(*) from tool_embeddings where $1::text is not null');
await t('max distance', 'select max(1 - (embedding <=> $1::vector)) from tool_embeddings');
await t('max inner product', 'select max(-(embedding <#> $1::vector)) from tool_embeddings');
await db.exec(`alter table tool_embeddings alter column embedding set storage plain; update tool_embeddings set embedding = embedding::text::vector; vacuum full tool_embeddings; analyze tool_embeddings`);
console.log((await db.query(`select pg_column_size(embedding) s, count(*) from tool_embeddings group by 1 order by 2 desc limit 3`)).rows);
console.log((await db.query(`select pg_relation_size('tool_embeddings') h, pg_total_relation_size('tool_embeddings') t`)).rows);
await t('plain: max distance', 'select max(1 - (embedding <=> $1::vector)) from tool_embeddings');
await t('plain: max inner product', 'select max(-(embedding <#> $1::vector)) from tool_embeddings');
await db.close();
