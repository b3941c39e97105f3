/**
 * Headers of every request to a paid upstream that is asked once per lookup (UKVD, Vincario,
 * CarsXE). `connection: close`: such a request is never retried (each call may be billed), so it
 * must not go out on a pooled keep-alive connection that the server may be closing at that very
 * moment: that fails it with ECONNRESET, and nothing tells whether it was billed. With every call
 * to the provider closing its connection, none is left in the pool to be reused. A fresh
 * connection per paid call costs a handshake, which the answer cache repays (one call per vehicle).
 */
export const PAID_REQUEST_HEADERS: Readonly<Record<string, string>> = Object.freeze({ accept: 'application/json', connection: 'close' });
