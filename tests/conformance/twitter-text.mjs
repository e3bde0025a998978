// Reads JSON strings, one per line, on stdin and prints twitter-text's
// `parseTweet(text).weightedLength` for each, one per line: X's own count (config v3),
// which src-tauri/api/tests/it/x_count.rs compares with Inkstone's. Uses the
// twitter-text package installed in ui/node_modules (a dev dependency of the UI).
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../ui/package.json', import.meta.url));
const twitter = require('twitter-text');

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (const line of input.split('\n')) {
  if (line === '') continue;
  out.push(String(twitter.parseTweet(JSON.parse(line)).weightedLength));
}
process.stdout.write(out.join('\n') + '\n');
