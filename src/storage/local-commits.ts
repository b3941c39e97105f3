/**
 * Commits made through this thread's SQLite connections, counted (every connection the storage
 * layer opens reports here: sqlite-statement-cache.ts for statements Kysely runs, sqlite-connection.ts
 * for Storage.transaction, create-database.ts for migrations).
 *
 * ChangeSnapshot reads SQLite's data_version once per turn of the event loop; a commit made in
 * this thread through another connection (a second store opened on the same file, as tests and
 * in-process tools do) must still be seen by the very next lookup, so a moved count makes the
 * snapshot read again. Per thread, like the connections themselves.
 */
let commits = 0;

export function noteLocalCommit(): void {
  commits += 1;
}

export function localCommitCount(): number {
  return commits;
}
