import type { Server } from 'node:http';

/**
 * Caps the open connections of each client address: past `max`, a new connection is closed at
 * once, before it can hold a socket, a parser or a timer. Behind a proxy every connection comes
 * from the proxy's address: raise the cap or set 0 (no cap) and let the proxy cap clients.
 */
export function capConnectionsPerClient(server: Server, max: number): void {
  if (max === 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > max) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
