// The benchmark's webhook receiver, run as its own process: answers 204 to every POST and keeps the
// time each webhook-id arrived. GET /stats returns them; POST /reset forgets them.
import http from 'node:http';

let receipts: [string, number][] = [];

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ receipts }));
    return;
  }
  if (req.method === 'POST' && req.url === '/reset') {
    receipts = [];
    res.writeHead(204).end();
    return;
  }
  req.on('data', () => {});
  req.on('end', () => {
    const id = req.headers['webhook-id'];
    if (typeof id === 'string') receipts.push([id, Date.now()]);
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
});
