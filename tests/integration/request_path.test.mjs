// net/request_path.ld lists the functions the database routes run, by
// object and section name, for net/cold.ld to place together (.text.path).
// A name that no longer exists (a function renamed, made static in another
// file, or cloned by the compiler under a new name) matches nothing and is
// dropped without a word from the linker: this finds each one in the
// link map's .text.path, where the list put it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, BIN } from './lib.mjs';
import { memoryMap } from '../../tools/linkmap.js';

const LIST = path.join(ROOT, 'net', 'request_path.ld');
// The map of the binary under test: the ASan and lwIP builds write none
// (nor link with net/cold.ld), so their passes skip this.
const MAP = `${BIN}.map`;

test('every function net/request_path.ld names is in the binary\'s .text.path', {
	skip: !fs.existsSync(MAP) && `${MAP} is absent (make bin writes build/bin/service's; the ASan and lwIP builds, none)`,
}, () => {
	const wanted = fs.readFileSync(LIST, 'utf8').split('\n')
		.map((l) => /^\s*\*(\S+)\((\S+)\)$/.exec(l)).filter(Boolean)
		.map(([, file, section]) => ({ file, section }));
	assert.ok(wanted.length > 50, `${LIST}: ${wanted.length} patterns`);
	const inPath = memoryMap(MAP).filter((s) => s.output === '.text.path' && s.size > 0).map((s) => `${s.object}|${s.input}`);
	assert.ok(inPath.length > 0, `${MAP} has a .text.path (net/cold.ld)`);
	// *net/pg/x.o(S) names build/obj/net/pg/x.o's S; *libc.a:m.lo(S), libc.a(m.lo)'s.
	const suffix = ({ file }) => (file.includes(':') ? file.replace(/^(.*):(.*)$/, '$1($2)') : `/${file}`);
	const missing = wanted.filter((w) => !inPath.some((p) => p.endsWith(`${suffix(w)}|${w.section}`) || p === `${w.file}|${w.section}`))
		.map((w) => `*${w.file}(${w.section})`);
	assert.deepEqual(missing, [], 'names that match nothing: rerun node tools/bench/request-path.js');
});
