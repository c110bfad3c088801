/**
 * A web server that is not the phone system, as a newcomer meets one with a wrong service address:
 * nginx's welcome page at `/` and its HTML 404 page everywhere else (get_token included), as
 * nginx 1.22 serves them. Counts the requests, so a test can tell a retry loop from a stop.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const WELCOME =
  '<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n</head>\n<body>\n<h1>Welcome to nginx!</h1>\n</body>\n</html>\n';
const NOT_FOUND =
  '<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n';

export interface OtherWebServer {
  baseUrl: string;
  host: string;
  /** Requests seen, by path. */
  requests: string[];
  close(): Promise<void>;
}

export async function otherWebServer(): Promise<OtherWebServer> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    req.resume();
    const page = req.url === '/' ? WELCOME : NOT_FOUND;
    res.writeHead(req.url === '/' ? 200 : 404, {
      server: 'nginx/1.22.1',
      'content-type': 'text/html',
      'content-length': Buffer.byteLength(page),
    });
    res.end(page);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
