#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, resolved from this package (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/index.ts');
