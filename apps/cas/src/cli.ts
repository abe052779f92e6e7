#!/usr/bin/env node
import 'reflect-metadata';
import { loadConfigOrExit } from '@collect/platform';
import { runCli } from './cli/run-cli.js';
import { loadCasConfig } from './config/cas-config.js';

runCli(process.argv.slice(2), () => loadConfigOrExit(loadCasConfig), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}).then((status) => {
  // A refused or failed command exits at once, as a half-made context may hold handles open.
  if (status !== 0) process.exit(status);
});
