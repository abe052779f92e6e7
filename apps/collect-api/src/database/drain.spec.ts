import { EventEmitter } from 'node:events';
import { drainOrClose } from './drain.js';

describe('drainOrClose', () => {
  it('leaves no listener behind, however many waits a stream sees', async () => {
    const out = new EventEmitter();
    const other = new EventEmitter();
    for (let i = 0; i < 1000; i++) {
      const wait = drainOrClose(out, other);
      out.emit('drain');
      await wait;
    }
    expect(out.listenerCount('close') + out.listenerCount('error') + out.listenerCount('drain')).toBe(0);
    expect(other.listenerCount('close') + other.listenerCount('error')).toBe(0);
  });

  it('ends on a close of the stream or of a closer, and rejects on an error', async () => {
    const out = new EventEmitter();
    const other = new EventEmitter();
    const a = drainOrClose(out, other);
    other.emit('close');
    await a;
    const b = drainOrClose(out);
    out.emit('close');
    await b;
    const c = drainOrClose(out);
    out.emit('error', new Error('broken'));
    await expect(c).rejects.toThrow('broken');
    expect(out.listenerCount('close') + out.listenerCount('error') + out.listenerCount('drain')).toBe(0);
  });
});
