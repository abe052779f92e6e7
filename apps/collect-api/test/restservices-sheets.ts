import http from 'node:http';

interface Sheet {
  title: string;
  rows: string[][];
}

/**
 * A local stand-in for the Google Sheets API v4 and its OAuth 2.0 token endpoint (the parts the
 * spreadsheet sync uses): spreadsheets.create, values.update/append/clear with Bearer tokens,
 * authorization_code and refresh_token grants for one registered client.
 */
export class FakeSheetsProvider {
  readonly sheets = new Map<string, Sheet>();
  readonly calls: Array<{ method: string; path: string; rows?: number }> = [];
  /** code → the redirect_uri it was issued for. */
  readonly codes = new Map<string, string>();
  private readonly tokens = new Set<string>();
  /** Answer spreadsheets.create with this status (provider outage). */
  failCreate: number | null = null;
  /** Answer the next this many writes (append, update) 429 with `Retry-After: 1` (the per-minute quota). */
  throttleWrites = 0;
  /** When each write was answered, and with which status. */
  readonly writes: Array<{ at: number; status: number }> = [];
  private n = 0;
  private server!: http.Server;
  url = '';

  constructor(readonly clientId = 'sheets-client', readonly clientSecret = 'sheets-secret') {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        const url = new URL(req.url ?? '/', 'http://x');
        const send = (status: number, json: unknown) => {
          res.writeHead(status, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify(json));
        };
        if (req.method === 'POST' && url.pathname === '/token') return send(...this.token(new URLSearchParams(body)));
        const auth = req.headers.authorization ?? '';
        if (!auth.startsWith('Bearer ') || !this.tokens.has(auth.slice(7))) return send(401, { error: { code: 401, status: 'UNAUTHENTICATED' } });
        const data = body ? (JSON.parse(body) as { properties?: { title?: string }; values?: string[][] }) : {};
        if (req.method === 'POST' && url.pathname === '/v4/spreadsheets' && this.failCreate) return send(this.failCreate, { error: { code: this.failCreate } });
        if (req.method === 'POST' && url.pathname === '/v4/spreadsheets') {
          const id = `sheet-${++this.n}`;
          this.sheets.set(id, { title: data.properties?.title ?? '', rows: [] });
          this.calls.push({ method: 'create', path: url.pathname });
          return send(200, { spreadsheetId: id, properties: { title: data.properties?.title }, spreadsheetUrl: `${this.url}/d/${id}` });
        }
        const m = /^\/v4\/spreadsheets\/([^/]+)\/values\/([^:]+)(?::(append|clear))?$/.exec(url.pathname);
        const sheet = m ? this.sheets.get(decodeURIComponent(m[1])) : undefined;
        if (!m || !sheet) return send(404, { error: { code: 404 } });
        const range = decodeURIComponent(m[2]);
        const startRow = Number(/![A-Z]+(\d+)/.exec(range)?.[1] ?? 1);
        const values = data.values ?? [];
        if ((req.method === 'PUT' && !m[3]) || (req.method === 'POST' && m[3] === 'append')) {
          if (this.throttleWrites > 0) {
            this.throttleWrites--;
            this.writes.push({ at: Date.now(), status: 429 });
            res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '1' });
            return res.end(JSON.stringify({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } }));
          }
          this.writes.push({ at: Date.now(), status: 200 });
        }
        if (req.method === 'PUT' && !m[3]) {
          values.forEach((v, i) => (sheet.rows[startRow - 1 + i] = v));
          this.calls.push({ method: 'update', path: range, rows: values.length });
          return send(200, { spreadsheetId: m[1], updatedRange: `Sheet1!A${startRow}:Z${startRow + values.length - 1}`, updatedRows: values.length });
        }
        if (req.method === 'POST' && m[3] === 'append') {
          const first = sheet.rows.length + 1;
          sheet.rows.push(...values);
          this.calls.push({ method: 'append', path: range, rows: values.length });
          return send(200, { spreadsheetId: m[1], updates: { updatedRange: `Sheet1!A${first}:Z${first + values.length - 1}`, updatedRows: values.length } });
        }
        if (req.method === 'POST' && m[3] === 'clear') {
          sheet.rows[startRow - 1] = [];
          this.calls.push({ method: 'clear', path: range });
          return send(200, { spreadsheetId: m[1], clearedRange: range });
        }
        return send(400, { error: { code: 400 } });
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  private token(p: URLSearchParams): [number, unknown] {
    if (p.get('client_id') !== this.clientId || p.get('client_secret') !== this.clientSecret) return [401, { error: 'invalid_client' }];
    if (p.get('grant_type') === 'authorization_code') {
      const code = p.get('code') ?? '';
      if (!this.codes.has(code) || this.codes.get(code) !== p.get('redirect_uri')) return [400, { error: 'invalid_grant' }];
      this.codes.delete(code);
    } else if (p.get('grant_type') !== 'refresh_token' || !p.get('refresh_token')) return [400, { error: 'unsupported_grant_type' }];
    const access = `at-${++this.n}`;
    this.tokens.add(access);
    return [200, { access_token: access, refresh_token: `rt-${this.n}`, expires_in: 3600, token_type: 'Bearer', scope: 'https://www.googleapis.com/auth/spreadsheets' }];
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
