#!/usr/bin/env node
// Turns cases.json and the JSON Schema test suite's pattern files into C
// for gen.c (patterns.inc, expect.inc) and check.c (checks.inc), and asks
// V8's RegExp (u flag) to confirm the hand-written answers and to answer
// random strings (samples.txt: "pattern <index> <count> <description>",
// then per string "<0|1> <UTF-8 as hex, - if empty>"). Prints TAP lines
// without numbers (run numbers them).
//   extract.js <suite tests/draft2020-12 dir, or "" for none> <cases.json> <out dir>
'use strict';
const fs = require('fs');
const path = require('path');

const [suiteDir, casesFile, outDir] = process.argv.slice(2);
const SUITE_FILES = ['pattern.json', 'patternProperties.json',
	'optional/ecmascript-regex.json', 'optional/non-bmp-regex.json'];
const FUZZ_STRINGS = 200;
// Random patterns of the supported syntax, each compared with V8 on random
// strings (REGEX_RANDOM_PATTERNS=5000 for a longer hunt).
const RANDOM_PATTERNS = Number(process.env.REGEX_RANDOM_PATTERNS || 300);

const patterns = [];
const patternIndex = new Map();
function pat(p) {
	if (!patternIndex.has(p)) {
		patternIndex.set(p, patterns.length);
		patterns.push(p);
	}
	return patternIndex.get(p);
}

// The UTF-8 bytes of s as a C literal: octal escapes are never extended by
// what follows, and an escaped '?' cannot start a trigraph.
function cstr(s) {
	let out = '"';
	for (const b of Buffer.from(s, 'utf8')) {
		const c = String.fromCharCode(b);
		if (c === '"' || c === '\\' || c === '?') out += '\\' + c;
		else if (b >= 0x20 && b < 0x7f) out += c;
		else out += '\\' + b.toString(8).padStart(3, '0');
	}
	return out + '"';
}
const blen = (s) => Buffer.byteLength(s, 'utf8');
// For TAP descriptions: controls and line ends as \uXXXX, shortened.
function show(s) {
	const j = s.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g,
		(c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
	return j.length > 48 ? j.slice(0, 45) + '...' : j;
}
const match = (i, s) => `M(${i}, ${cstr(s)}, ${blen(s)})`;

const tap = [];
const checks = [];  // statements, run in order
const samples = []; // samples.txt: random strings with V8's answers, read by check at run time
const expects = [];

function v8(p) {
	try {
		return new RegExp(p, 'u');
	} catch (e) {
		return null;
	}
}

// A check of check.c: expr against want. Suite cases (mayBeUnsupported)
// are skipped when one of their patterns is rejected as unsupported; a
// hand-written one must compile.
function addCheck(desc, pats, expr, want, mayBeUnsupported) {
	checks.push(`{
	static const int pats[] = {${pats.join(', ')}};
	if (!unsupported(${cstr(desc)}, pats, ${pats.length}, ${mayBeUnsupported ? 1 : 0}))
		report(${cstr(desc)}, ${expr}, ${want});
}`);
}
function addSkip(desc, why) {
	checks.push(`skip(${cstr(desc)}, ${cstr(why)});`);
}

// ---- the suite: string data for pattern, objects for patternProperties ----

const TYPES = {
	integer: (v) => Number.isInteger(v),
	number: (v) => typeof v === 'number',
	string: (v) => typeof v === 'string',
	boolean: (v) => typeof v === 'boolean',
	null: (v) => v === null,
	object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
	array: (v) => Array.isArray(v),
};

// Whether v is valid against a subschema of patternProperties: the few
// keywords those files use; anything else throws (the case is then skipped
// with the reason, never guessed).
function valid(schema, v) {
	if (schema === true || schema === false) return schema;
	for (const [k, x] of Object.entries(schema)) {
		if (k === 'type') {
			if (!TYPES[x](v)) return false;
		} else if (k === 'maximum') {
			if (typeof v === 'number' && v > x) return false;
		} else {
			throw new Error(`the harness does not evaluate "${k}"`);
		}
	}
	return true;
}

function suiteCase(file, group, test) {
	const s = group.schema;
	const desc = `${file}: ${group.description}: ${test.description}`;
	const extra = Object.keys(s).filter((k) =>
		!['$schema', 'type', 'pattern', 'patternProperties', 'additionalProperties'].includes(k));
	if (extra.length) return addSkip(desc, `the harness does not evaluate "${extra[0]}"`);
	if (s.type && !TYPES[s.type](test.data))
		return addSkip(desc, 'type decides, not the pattern');
	if ('pattern' in s) {
		if (typeof test.data !== 'string') return addSkip(desc, 'not a string: pattern ignores it');
		const i = pat(s.pattern);
		return addCheck(desc, [i], match(i, test.data), test.valid, true);
	}
	if (!TYPES.object(test.data)) return addSkip(desc, 'not an object: patternProperties ignores it');
	const pp = Object.entries(s.patternProperties).map(([p, sub]) => [pat(p), sub]);
	const terms = [];
	try {
		for (const [key, value] of Object.entries(test.data)) {
			for (const [i, sub] of pp)
				if (!valid(sub, value)) terms.push(`!${match(i, key)}`);
			if (s.additionalProperties === false)
				terms.push('(' + pp.map(([i]) => match(i, key)).join(' || ') + ')');
			else if ('additionalProperties' in s)
				throw new Error('the harness only evaluates additionalProperties: false');
		}
	} catch (e) {
		return addSkip(desc, e.message);
	}
	addCheck(desc, pp.map(([i]) => i), terms.length ? terms.join(' && ') : 'true', test.valid, true);
}

// No suite (an empty suiteDir): its cases are one skip, the rest still runs.
if (!suiteDir)
	tap.push('ok - the JSON Schema Test Suite\'s pattern cases # SKIP JSON Schema Test Suite not found (set JSON_SCHEMA_TEST_SUITE)');
for (const file of suiteDir ? SUITE_FILES : []) {
	const groups = JSON.parse(fs.readFileSync(path.join(suiteDir, file), 'utf8'));
	for (const group of groups)
		for (const test of group.tests)
			suiteCase(file, group, test);
}

// ---- hand-written cases ----

const cases = JSON.parse(fs.readFileSync(casesFile, 'utf8'));
let agreed = 0, disagreed = 0;
const v8Rejects = [];

function handCases(list, isFallback) {
	for (const c of list) {
		const i = pat(c.pattern);
		if (isFallback) expects.push(`FALLBACK(${i})`);
		const re = v8(c.pattern);
		if (!re) v8Rejects.push(c.pattern);
		for (const [strings, want] of [[c.yes || [], true], [c.no || [], false]])
			for (const s of strings) {
				const desc = `\`${show(c.pattern)}\` ${want ? 'matches' : 'does not match'} "${show(s)}"`;
				addCheck(desc, [i], match(i, s), want, false);
				if (!re) continue;
				if (re.test(s) === want) agreed++;
				else disagreed++, tap.push(`not ok - cases.json: V8 disagrees: ${desc}`);
			}
		if (re) fuzz(i, c.pattern, re);
	}
}

// xorshift32: the same numbers on every run and machine.
function rng(seed) {
	seed = (seed | 0) || 1;
	return (n) => {
		seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
		return (seed >>> 0) % n;
	};
}

// A random pattern over a small alphabet (so that strings hit it), using
// every supported construct; ^ and $ anywhere.
function randomPattern(rand, depth) {
	const atoms = ['a', 'b', 'c', '.', '\\d', '\\w', '\\s', '\\D', '\\W', '\\S', '[ab]', '[^a]', '[a-c]',
		'[^\\s]', '[\\d-]', '\\.', '\\u00e9', '\\u{1F600}', '\u00e9', '\u{1f600}', '[\u00e0-\u00ff]', '\\n',
		'[^]', '[]', '^', '$'];
	const quants = ['*', '+', '?', '{2}', '{1,}', '{0,2}', '{1,3}', '*?', '+?', '??', '{2,}?'];
	const term = () => {
		let t;
		if (depth > 0 && rand(4) === 0)
			t = (rand(2) ? '(' : '(?:') + randomPattern(rand, depth - 1) + ')';
		else
			t = atoms[rand(atoms.length)];
		if (t !== '^' && t !== '$' && rand(3) === 0) t += quants[rand(quants.length)];
		return t;
	};
	const branch = () => {
		let b = '';
		for (let n = 1 + rand(4); n > 0; n--) b += term();
		return b;
	};
	let p = branch();
	while (rand(4) === 0) p += '|' + branch();
	return p;
}

// Random strings over the pattern's own characters, their neighbours and
// some that tend to break things (line ends, multi-byte, astral, NUL).
function fuzz(i, p, re) {
	const rand = rng(0x9e3779b9 ^ Math.imul(i + 1, 2654435761));
	const alphabet = new Set(['a', 'b', '0', '9', '_', ' ', '-', '.', '\n', '\r', '\t', '\u0000',
		'\u00a0', '\u00e9', '\u2028', '\u20ac', '\ufeff', '\u{1f600}', '\u{10ffff}']);
	for (const ch of p) {
		alphabet.add(ch);
		const cp = ch.codePointAt(0);
		if (cp > 0) alphabet.add(String.fromCodePoint(cp - 1));
		if (cp < 0x10ffff && (cp < 0xd7ff || cp > 0xdfff)) alphabet.add(String.fromCodePoint(cp + 1));
	}
	const chars = [...alphabet].filter((c) => !/^[\ud800-\udfff]$/.test(c));
	samples.push(`pattern ${i} ${FUZZ_STRINGS} \`${show(p)}\` agrees with V8 (u flag) on ${FUZZ_STRINGS} random strings`);
	for (let k = 0; k < FUZZ_STRINGS; k++) {
		let s = '';
		for (let n = rand(14); n > 0; n--) s += chars[rand(chars.length)];
		samples.push(`${re.test(s) ? 1 : 0} ${Buffer.from(s, 'utf8').toString('hex') || '-'}`);
	}
}

handCases(cases.match, false);
const rand = rng(20240601);
for (let k = 0; k < RANDOM_PATTERNS; k++) {
	const body = randomPattern(rand, 2), shape = rand(4); /* anchored ones are rarely trivial */
	const p = shape === 0 ? body : shape === 1 ? `^(?:${body})` : `^(?:${body})$`;
	const re = v8(p);
	if (re) fuzz(pat(p), p, re);
	else tap.push(`not ok - random pattern \`${show(p)}\` is valid ECMA-262 (u flag)`);
}
handCases(cases.fallback, true);
for (const [p, msg] of cases.reject)
	expects.push(`REJECT(${pat(p)}, ${cstr(msg)})`);
for (const c of cases.long) {
	const desc = `\`${show(c.pattern)}\` ${c.match ? 'matches' : 'does not match'} "${show(c.repeat)}" x ${c.times} + "${show(c.suffix)}" (linear time)`;
	const i = pat(c.pattern);
	addCheck(desc, [i], `long_match(${i}, ${cstr(c.repeat)}, ${c.times}, ${cstr(c.suffix)})`, c.match, false);
}

tap.push(`${disagreed ? 'not ok' : 'ok'} - cases.json: V8 (u flag) gives the listed answer in ${agreed} of ${agreed + disagreed} cases it can run`);
for (const p of v8Rejects)
	tap.push(`# V8 rejects \`${show(p)}\` with the u flag (a superset here): its cases are not cross-checked`);

fs.writeFileSync(path.join(outDir, 'patterns.inc'), patterns.map((p) => `PATTERN(${cstr(p)})`).join('\n') + '\n');
fs.writeFileSync(path.join(outDir, 'expect.inc'), expects.join('\n') + '\n');
// Small functions: one huge one takes the compiler (and ASan) far longer.
const chunks = [];
for (let k = 0; k < checks.length; k += 40)
	chunks.push(`static void checks_${chunks.length}(void)\n{\n${checks.slice(k, k + 40).join('\n')}\n}`);
fs.writeFileSync(path.join(outDir, 'samples.txt'), samples.join('\n') + '\n');
fs.writeFileSync(path.join(outDir, 'checks.inc'), chunks.join('\n\n') +
	`\n\nstatic void run_checks(void)\n{\n${chunks.map((_, k) => `\tchecks_${k}();`).join('\n')}\n}\n`);
console.log(tap.join('\n'));
