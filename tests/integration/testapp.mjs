// A test app of tests/apps/ built out of the tree (a copy in a folder of
// the suite's, INGOT_ROOT pointing here), as a user's app is built: the
// path of its binary, build/bin/<name>. Built once per suite.
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, commandRunner } from './lib.mjs';

const { must } = commandRunner({ timeoutMs: 240000 });
const built = new Map();

export function buildTestApp(name, tmp) {
	if (!built.has(name))
		built.set(name, (async () => {
			const dir = path.join(tmp, name);
			fs.cpSync(path.join(ROOT, 'tests', 'apps', name), dir,
				{ recursive: true, filter: (src) => path.basename(src) !== 'build' });
			await must('make', ['--no-print-directory', '-C', dir], { env: { ...process.env, INGOT_ROOT: ROOT } });
			return path.join(dir, 'build', 'bin', name);
		})());
	return built.get(name);
}
