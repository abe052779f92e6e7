import { Receiver } from './restservices-receiver.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

export interface RestServiceSuite {
  sut: TestCollectApp;
  owner: TestUser;
  rx: Receiver;
}

/**
 * A collect-api with its worker, an owner and a local receiver, started in the calling describe
 * block's beforeAll and closed in its afterAll. `ready` runs once they are up (a suite keeps
 * its own names for them, or adds set-up of its own).
 */
export function withWorkerAppAndReceiver(env: Record<string, string>, ready?: (suite: RestServiceSuite) => void | Promise<void>): RestServiceSuite {
  const suite = {} as RestServiceSuite;
  beforeAll(async () => {
    suite.sut = await startTestCollectApp(env, { worker: true });
    suite.owner = await createTestUser(suite.sut.app);
    suite.rx = await new Receiver().start();
    await ready?.(suite);
  });
  afterAll(async () => {
    await suite.sut?.close();
    await suite.rx?.close();
  });
  return suite;
}
