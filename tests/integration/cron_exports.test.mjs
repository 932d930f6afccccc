// x-ingot-cron's exports for platforms that scale to zero, as `make image`
// and `make lambda` write them (build/schemac --cron-export, the Makefile's
// image and lambda targets): tools/schemac/test/cron.yaml's jobs as Knative
// PingSources, read with a YAML parser, and as EventBridge Scheduler
// schedules (CreateSchedule's JSON), with each conversion checked; jobs
// the platforms cannot run (more often than a minute, not whole minutes,
// a day rule the syntax cannot state) left out with a warning naming them.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { ROOT } from './lib.mjs';

const SCHEMAC = path.join(ROOT, 'build', 'schemac');
const DOC = path.join(ROOT, 'tools', 'schemac', 'test', 'cron.yaml');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ingot-cron-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const exportTo = (kind, doc, app, dir) => {
	const r = spawnSync(SCHEMAC, ['--cron-export', kind, doc, app, dir], { encoding: 'utf8' });
	return { status: r.status, stderr: r.stderr };
};

// The five-field expressions as PingSource (robfig/cron) writes them: a
// restricted day field never starts with `*`, which robfig reads as "any".
const PING = {
	five: '*/5 * * * *',
	seven: '@every 7m',
	'two-hours': '0 */2 * * *',
	daily: '0 0 * * *',
	hourly: '0 * * * *',
	workdays: '30 2 * * 1-5',
	'twice-a-month': '0 0 1,15 * *',
	'friday-13': '0 12 13 * 5',
	quarters: '*/15 9-17 * 1,3 *',
	weekend: '0 8 * * 0,6',
};
// EventBridge: rates for periods of whole minutes, six-field crons with
// `?` in one day field and Sunday as 1.
const EVENTBRIDGE = {
	five: 'rate(5 minutes)',
	seven: 'rate(7 minutes)',
	'two-hours': 'rate(2 hours)',
	daily: 'rate(1 day)',
	hourly: 'cron(0 * * * ? *)',
	workdays: 'cron(30 2 ? * 2-6 *)',
	'twice-a-month': 'cron(0 0 1,15 * ? *)',
	quarters: 'cron(0/15 9-17 * 1,3 ? *)',
	weekend: 'cron(0 8 ? * 1,7 *)',
};

const warned = (stderr) => [...stderr.matchAll(/warning: cron job "([^"]+)"/g)].map((m) => m[1]).sort();

test('make image: a PingSource per job, POSTing a CloudEvent naming it to the service\'s /_ingot/cron', () => {
	assert.ok(fs.existsSync(SCHEMAC), 'build/schemac (make bin)');
	const dir = path.join(tmp, 'image');
	const r = exportTo('knative', DOC, 'demo', dir);
	assert.equal(r.status, 0, r.stderr);
	const docs = YAML.parseAllDocuments(fs.readFileSync(path.join(dir, 'knative-pingsources.yaml'), 'utf8'));
	for (const d of docs) assert.deepEqual(d.errors, []);
	const sources = docs.map((d) => d.toJS());
	assert.deepEqual(sources.map((s) => s.metadata.name).sort(), Object.keys(PING).map((j) => `demo-${j}`).sort());
	for (const s of sources) {
		const job = s.metadata.name.slice('demo-'.length);
		assert.equal(s.apiVersion, 'sources.knative.dev/v1');
		assert.equal(s.kind, 'PingSource');
		assert.equal(s.spec.schedule, PING[job], job);
		assert.equal(s.spec.timezone, 'UTC');
		assert.equal(s.spec.contentType, 'application/json');
		assert.deepEqual(JSON.parse(s.spec.data), { job });
		assert.deepEqual(s.spec.sink, {
			ref: { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'demo' },
			uri: '/_ingot/cron',
		});
	}
	assert.deepEqual(warned(r.stderr), ['heartbeat', 'ninety', 'odd-mondays']);
	assert.match(r.stderr, /cron\.yaml:26:5: \/x-ingot-cron\/0: warning: cron job "heartbeat" \(every "1s"\) runs more often than once a minute: left out of the Knative PingSources/);
});

test('make lambda: an EventBridge schedule per job, its target the function with an Input naming the job', () => {
	const dir = path.join(tmp, 'lambda');
	const r = exportTo('eventbridge', DOC, 'demo', dir);
	assert.equal(r.status, 0, r.stderr);
	const files = fs.readdirSync(path.join(dir, 'lambda-schedules')).sort();
	assert.deepEqual(files, Object.keys(EVENTBRIDGE).map((j) => `demo-${j}.json`).sort());
	for (const f of files) {
		const job = f.slice('demo-'.length, -'.json'.length);
		const s = JSON.parse(fs.readFileSync(path.join(dir, 'lambda-schedules', f), 'utf8'));
		assert.equal(s.Name, `demo-${job}`);
		assert.equal(s.ScheduleExpression, EVENTBRIDGE[job], job);
		assert.equal(s.ScheduleExpressionTimezone, 'UTC');
		assert.deepEqual(s.FlexibleTimeWindow, { Mode: 'OFF' });
		assert.equal(s.State, 'ENABLED');
		assert.equal(s.Target.Arn, 'FUNCTION_ARN');
		assert.equal(s.Target.RoleArn, 'SCHEDULER_ROLE_ARN');
		assert.deepEqual(JSON.parse(s.Target.Input), {
			source: 'ingot.cron', job, time: '<aws.scheduler.scheduled-time>',
		});
		const cron = /^cron\((.*)\)$/.exec(s.ScheduleExpression);
		if (cron) {
			const fields = cron[1].split(' ');
			assert.equal(fields.length, 6, s.ScheduleExpression);
			assert.equal((fields[2] === '?') + (fields[4] === '?'), 1, `one day field is ?: ${s.ScheduleExpression}`);
		} else {
			assert.match(s.ScheduleExpression, /^rate\(\d+ (minute|hour|day)s?\)$/);
		}
	}
	assert.deepEqual(warned(r.stderr), ['friday-13', 'heartbeat', 'ninety', 'odd-mondays']);
	assert.match(r.stderr, /warning: cron job "heartbeat" \(every "1s"\) runs more often than once a minute: left out of the EventBridge schedules/);
	assert.match(r.stderr, /warning: cron job "friday-13" .* days of the month or days of the week, which EventBridge's cron cannot combine/);
});

test('a document without jobs writes nothing, and takes away what an earlier build wrote', () => {
	const dir = path.join(tmp, 'stale');
	assert.equal(exportTo('knative', DOC, 'demo', dir).status, 0);
	assert.equal(exportTo('eventbridge', DOC, 'demo', dir).status, 0);
	const none = path.join(ROOT, 'tools', 'schemac', 'test', 'principal.json');
	for (const kind of ['knative', 'eventbridge']) {
		const r = exportTo(kind, none, 'Not_A_Label', dir);
		assert.equal(r.status, 0, r.stderr);
		assert.equal(r.stderr, '');
	}
	assert.equal(fs.existsSync(path.join(dir, 'knative-pingsources.yaml')), false);
	assert.deepEqual(fs.readdirSync(path.join(dir, 'lambda-schedules')), []);
});

test('an app name that cannot name the objects fails the export of a document with jobs', () => {
	const r = exportTo('knative', DOC, 'Demo_App', path.join(tmp, 'bad'));
	assert.equal(r.status, 1);
	assert.match(r.stderr, /the app's name "Demo_App" must be lower-case letters, digits and '-'/);
	assert.equal(fs.existsSync(path.join(tmp, 'bad', 'knative-pingsources.yaml')), false);
});

test('the Makefile runs these exports in make image and make lambda', () => {
	const dry = (target) => execFileSync('make', ['-n', '--no-print-directory', '-C', ROOT, target], { encoding: 'utf8' });
	assert.match(dry('image'), /build\/schemac --cron-export knative schemas\/service\.json ingot build\/images/);
	assert.match(dry('lambda'), /build\/schemac --cron-export eventbridge schemas\/service\.json ingot build\/images/);
});
