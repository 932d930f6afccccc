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
import { ROOT } from './lib.mjs';

const LIST = path.join(ROOT, 'net', 'request_path.ld');
const MAP = path.join(ROOT, 'build', 'bin', 'service.map');

// { output section: Set of "object|input section" } of the map's memory map.
function placed(map) {
	const text = fs.readFileSync(map, 'utf8');
	const lines = text.slice(text.indexOf('Linker script and memory map')).split('\n');
	const out = {};
	let output = '';
	for (let i = 0; i < lines.length; i++) {
		const o = /^(\.\S+)/.exec(lines[i]);
		if (o) { output = o[1]; out[output] ??= new Set(); continue; }
		const m = /^ (\.text\S*)(?:\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+))?$/.exec(lines[i]);
		if (!m || !output) continue;
		let [, name, size, object] = m;
		if (object === undefined) {
			const n = /^\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)$/.exec(lines[i + 1] || '');
			if (!n) continue;
			[, size, object] = n;
		}
		if (parseInt(size, 16) > 0) out[output].add(`${object}|${name}`);
	}
	return out;
}

test('every function net/request_path.ld names is in the binary\'s .text.path', {
	skip: !fs.existsSync(MAP) && `${MAP} is absent (make bin writes it)`,
}, () => {
	const wanted = fs.readFileSync(LIST, 'utf8').split('\n')
		.map((l) => /^\s*\*(\S+)\((\S+)\)$/.exec(l)).filter(Boolean)
		.map(([, file, section]) => ({ file, section }));
	assert.ok(wanted.length > 50, `${LIST}: ${wanted.length} patterns`);
	const inPath = [...(placed(MAP)['.text.path'] || [])];
	assert.ok(inPath.length > 0, `${MAP} has a .text.path (net/cold.ld)`);
	// *net/pg/x.o(S) names build/obj/net/pg/x.o's S; *libc.a:m.lo(S), libc.a(m.lo)'s.
	const suffix = ({ file }) => (file.includes(':') ? file.replace(/^(.*):(.*)$/, '$1($2)') : `/${file}`);
	const missing = wanted.filter((w) => !inPath.some((p) => p.endsWith(`${suffix(w)}|${w.section}`) || p === `${w.file}|${w.section}`))
		.map((w) => `*${w.file}(${w.section})`);
	assert.deepEqual(missing, [], 'names that match nothing: rerun node tools/bench/request-path.js');
});
