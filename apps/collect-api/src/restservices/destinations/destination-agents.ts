import http from 'node:http';
import https from 'node:https';

/** Idle kept-alive connections are closed after this long (below common server keep-alive timeouts). */
const IDLE_MS = 4_000;

/**
 * One keep-alive HTTP agent per destination (scheme, host and port) in the worker, so a busy
 * destination gets its connections reused instead of a TCP (and TLS) handshake per delivery, and
 * at most `perDestination` requests in flight (the rest wait in the agent's queue; docs/restservices.md,
 * "Connections"). Connections are still opened through the SSRF guard's `lookup`, per request
 * options. Least recently used agents beyond `maxDestinations` are closed.
 */
export class DestinationAgents {
  private readonly agents = new Map<string, http.Agent>();

  constructor(
    private readonly perDestination: number,
    private readonly maxDestinations = 1_000,
  ) {}

  for(url: URL): http.Agent {
    const key = `${url.protocol}//${url.host}`;
    let agent = this.agents.get(key);
    if (agent) {
      this.agents.delete(key); // re-inserted below: Map order is the LRU order
    } else {
      const options = { keepAlive: true, maxSockets: this.perDestination, maxFreeSockets: this.perDestination, timeout: IDLE_MS, scheduling: 'lifo' as const };
      agent = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    }
    this.agents.set(key, agent);
    if (this.agents.size > this.maxDestinations) {
      const [oldestKey, oldest] = this.agents.entries().next().value as [string, http.Agent];
      this.agents.delete(oldestKey);
      oldest.destroy();
    }
    return agent;
  }

  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
