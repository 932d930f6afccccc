// The shipped service files (images/knative-service.yaml and
// images/cloudrun-service.yaml), read as YAML and checked field by field:
// probes on the paths the engine answers on the serving port, Pod Security's
// "restricted" securityContext where Knative takes it, the admin port for
// Prometheus by annotation, a drain that fits the platform's kill, and what
// make image writes from them. The probe paths are then asked of the real
// binary on its serving port.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { ROOT, startServer, cleanup, curlResponse, runBinary } from './lib.mjs';

after(cleanup);
const T = { timeout: 30000 };
const read = (f) => YAML.parse(fs.readFileSync(f, 'utf8'));
const knative = read(path.join(ROOT, 'images', 'knative-service.yaml'));
const cloudrun = read(path.join(ROOT, 'images', 'cloudrun-service.yaml'));
const container = (doc) => {
	assert.equal(doc.apiVersion, 'serving.knative.dev/v1');
	assert.equal(doc.kind, 'Service');
	assert.equal(doc.spec.template.spec.containers.length, 1);
	return doc.spec.template.spec.containers[0];
};
const env = (c) => Object.fromEntries((c.env || []).map((e) => [e.name, e.value]));
// A probe with no port goes to the container's (serving) port.
const probePath = (p) => {
	assert.ok(p?.httpGet, 'an HTTP probe');
	assert.equal(p.httpGet.port, undefined, 'on the serving port');
	return p.httpGet.path;
};

test('knative: readiness /readyz, liveness /livez and a startup probe, on the serving port', T, () => {
	const c = container(knative);
	assert.deepEqual(c.ports, [{ name: 'http1', containerPort: 8080 }]);
	assert.equal(probePath(c.readinessProbe), '/readyz');
	assert.equal(probePath(c.livenessProbe), '/livez');
	assert.equal(probePath(c.startupProbe), '/readyz');
});

test('knative: the securityContext Pod Security\'s "restricted" level requires, and a read-only root', T, () => {
	const s = container(knative).securityContext;
	assert.equal(s.runAsNonRoot, true);
	assert.equal(s.runAsUser, 65534);
	assert.equal(s.allowPrivilegeEscalation, false);
	assert.deepEqual(s.capabilities, { drop: ['ALL'] });
	assert.deepEqual(s.seccompProfile, { type: 'RuntimeDefault' });
	assert.equal(s.readOnlyRootFilesystem, true);
});

test('knative: the admin listener reached by Prometheus\'s scrape annotations, one container port', T, () => {
	const a = knative.spec.template.metadata.annotations;
	const e = env(container(knative));
	assert.equal(a['prometheus.io/scrape'], 'true');
	assert.equal(a['prometheus.io/path'], '/metrics');
	assert.equal(a['prometheus.io/port'], e.INGOT_ADMIN_PORT);
	assert.equal(a['autoscaling.knative.dev/min-scale'], '0');
});

test('both: a drain delay for the load balancer\'s lag, and delay plus grace inside the 10 s before the kill; memory limits set', T, () => {
	for (const [name, doc] of [['knative', knative], ['cloudrun', cloudrun]]) {
		const c = container(doc);
		const e = env(c);
		const delay = Number(e.INGOT_DRAIN_DELAY_MS), grace = Number(e.INGOT_GRACE_MS);
		assert.ok(delay > 0, `${name}: INGOT_DRAIN_DELAY_MS`);
		assert.ok(grace > 0 && delay + grace < 10000, `${name}: ${delay} + ${grace} ms`);
		assert.match(c.resources.limits.memory, /^\d+Mi$/, name);
		assert.match(c.image, /^REGISTRY\/ingot:\d+\.\d+\.\d+$/, name);
	}
});

test('cloudrun: only what Cloud Run\'s API accepts: no readiness probe, no securityContext, no admin port; startup and liveness probes', T, () => {
	const c = container(cloudrun);
	assert.equal(c.readinessProbe, undefined);
	assert.equal(c.securityContext, undefined);
	assert.equal(env(c).INGOT_ADMIN_PORT, undefined);
	assert.deepEqual(c.ports, [{ name: 'http1', containerPort: 8080 }]);
	assert.equal(probePath(c.startupProbe), '/readyz');
	assert.equal(probePath(c.livenessProbe), '/livez');
	assert.ok(Number(c.resources.limits.memory.replace('Mi', '')) >= 128, 'Cloud Run\'s smallest memory');
});

test('make image writes both files for the image: the service\'s name and its version as the tag', { ...T, skip: process.env.INGOT_BIN && 'make image packages build/bin/service; tested in the plain pass' }, async () => {
	const images = path.join(ROOT, 'build', 'images');
	assert.ok(fs.existsSync(path.join(images, 'knative-service.yaml')), `no manifests in ${images}: run make image`);
	const version = (await runBinary(['--version'])).stdout.split('\n')[0].trim().split(' ').pop();
	for (const f of ['knative-service.yaml', 'cloudrun-service.yaml']) {
		const built = read(path.join(images, f));
		assert.equal(built.metadata.name, 'ingot', f);
		assert.equal(container(built).image, `REGISTRY/ingot:${version}`, f);
	}
});

test('the probes\' paths answer on the serving port of the real binary: /readyz and /livez 200', T, async () => {
	const srv = await startServer();
	const paths = new Set();
	for (const doc of [knative, cloudrun]) {
		const c = container(doc);
		for (const p of [c.readinessProbe, c.livenessProbe, c.startupProbe]) if (p) paths.add(probePath(p));
	}
	assert.deepEqual([...paths].sort(), ['/livez', '/readyz']);
	for (const p of paths) assert.equal((await curlResponse(srv.port, p)).status, 200, p);
	await srv.stop();
});
