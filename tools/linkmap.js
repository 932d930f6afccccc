// linkmap.js: reads a GNU ld link map (-Map=FILE, as the Makefile writes
// build/bin/*.map). One reader for the tools and tests that ask a map
// where the linker put what: tools/bench/request-path.js (an address's
// input section), tests/integration/request_path.test.mjs (what
// .text.path holds) and apps.test.mjs (which objects a binary links).
'use strict';
const fs = require('node:fs');

// The memory map's input sections: [{ output, input, start, size, object }]
// in the map's order. output: the output section the input section went
// to ('.text.path'); input: its name ('.text.ig_pg_result_row', 'COMMON');
// object: the file it came from ('build/obj/net/pg/results.o',
// '/usr/lib/musl/lib/libc.a(memcpy.lo)'). ld writes an input section as
// its name and, on the same line or the next when the name is long, its
// address, size and object; a pattern line (' *(.text.x)'), a symbol's
// line (address and name) and a discarded section's (no address) are
// not input sections. Throws when the file is not a link map.
function memoryMap(file) {
	const text = fs.readFileSync(file, 'utf8');
	const at = text.indexOf('Linker script and memory map');
	if (at < 0) throw new Error(`${file} is not a link map`);
	const lines = text.slice(at).split('\n');
	const out = [];
	let output = '';
	for (let i = 0; i < lines.length; i++) {
		const o = /^(\.\S+)/.exec(lines[i]);
		if (o) { output = o[1]; continue; }
		const m = /^ (\.\S+|COMMON)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*))?$/.exec(lines[i]);
		if (!m) continue;
		let [, input, addr, size, object] = m;
		if (addr === undefined) {
			const n = /^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$/.exec(lines[i + 1] || '');
			if (!n) continue;
			[, addr, size, object] = n;
			i++;
		}
		out.push({ output, input, start: parseInt(addr, 16), size: parseInt(size, 16), object });
	}
	return out;
}

module.exports = { memoryMap };
