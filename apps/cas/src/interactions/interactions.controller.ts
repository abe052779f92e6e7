import { Body, Controller, Get, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InteractionLoginDto } from './interactions.dto.js';
import { InteractionsService, type Rendered } from './interactions.service.js';

/** Express's request (no @types/express here): `ip` honours `trust proxy`. */
type Request = IncomingMessage & { ip?: string };
type Response = ServerResponse;

/**
 * Login and consent pages (HTML). oidc-provider redirects the browser here with an interaction
 * cookie; each POST either re-renders the page or lets oidc-provider redirect onwards.
 */
@ApiExcludeController()
@Controller('interaction/:uid')
export class InteractionsController {
  constructor(private readonly interactions: InteractionsService) {}

  @Get()
  async show(@Req() req: Request, @Res() res: Response): Promise<void> {
    send(res, await this.interactions.show(req, res));
  }

  @Post('login')
  async login(@Req() req: Request, @Res() res: Response, @Body() body: InteractionLoginDto): Promise<void> {
    send(res, await this.interactions.login(req, res, body, req.ip ?? req.socket.remoteAddress ?? 'unknown'));
  }

  @Post('confirm')
  async confirm(@Req() req: Request, @Res() res: Response): Promise<void> {
    send(res, await this.interactions.confirm(req, res));
  }

  @Post('abort')
  async abort(@Req() req: Request, @Res() res: Response): Promise<void> {
    send(res, await this.interactions.abort(req, res));
  }
}

/** null: oidc-provider already answered (a redirect). */
function send(res: Response, page: Rendered | null): void {
  if (!page || res.headersSent) return;
  res.statusCode = page.status;
  const headers: Record<string, string> = {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    ...(page.headers ?? {}),
  };
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.end(page.html);
}
