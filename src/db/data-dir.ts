import { mkdirSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where an embedded DATA_DIR really is. PGlite reads its own spellings (`file://` stripped as
 * text, `memory://`, browser stores such as `idb://`), so the lock and PGlite could name two
 * different folders: `DATA_DIR=file://<dir>` put the lock in `./file:/<dir>` while PGlite opened
 * `<dir>`, and a second server ran on the live database (issue 32, finding 4). Every spelling is
 * resolved here once, to the folder's real path (symlinks followed); that path is what gets
 * locked and what PGlite is given, so two spellings of one folder meet at one lock.
 */
type DataDirPlace = { kind: 'memory' } | { kind: 'folder'; path: string };

/** DATA_DIR cannot be resolved to a folder (the message names the variable). */
export class DataDirError extends Error {
  override readonly name = 'DataDirError';
}

const MEMORY = 'memory://';
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/** The folder a `file:` URL names, or a DataDirError saying why it names none. */
function fromFileUrl(spelling: string): string {
  try {
    return fileURLToPath(new URL(spelling));
  } catch (error) {
    throw new DataDirError(`DATA_DIR ${spelling} is not a usable file: URL (${(error as Error).message}); use an absolute path such as file:///var/lib/tool-registry, or the path itself`);
  }
}

/**
 * Resolves a DATA_DIR spelling: `memory://` (ephemeral), or a folder (a path, relative to the
 * working directory, or a `file:` URL), created if missing and returned as its real path. Any
 * other scheme, and any folder that cannot be created or resolved, is refused naming DATA_DIR.
 */
export function resolveDataDir(spelling: string): DataDirPlace {
  if (spelling.startsWith(MEMORY)) return { kind: 'memory' };
  let folder: string;
  if (spelling.startsWith('file:')) folder = fromFileUrl(spelling);
  else if (SCHEME.test(spelling)) throw new DataDirError(`DATA_DIR ${spelling} names a storage the service cannot open; use a folder path or memory://`);
  else folder = resolve(spelling);
  try {
    mkdirSync(folder, { recursive: true });
    return { kind: 'folder', path: realpathSync(folder) };
  } catch (error) {
    throw new DataDirError(`DATA_DIR ${spelling} cannot be used as a folder (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}
