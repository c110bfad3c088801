#!/usr/bin/env node
// screenpop-headless: runs src-main/headless/cli.ts straight from TypeScript (Node >= 22.18 strips
// types). See src-main/headless/README.md for flags, the output lines and exit codes.
import '../src-main/headless/cli.ts';
