// A real nats-server (Debian's) for the suites that need one: started on a
// free loopback port with a JetStream store, stopped by its PID.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT, freePort, within } from './lib.mjs';

// nats-server when missing: tools/setup test installs it (as root).
function natsServerBin() {
	const find = () => ['/usr/sbin/nats-server', '/usr/bin/nats-server'].find((p) => fs.existsSync(p));
	if (find()) return find();
	execFileSync(path.join(ROOT, 'tools', 'setup'), ['test'], { stdio: ['ignore', 'ignore', 'inherit'] });
	const bin = find();
	if (!bin) throw new Error('nats-server is not installed and tools/setup test did not install it');
	return bin;
}

// natsForSuite() -> { start, startCluster, stopAll, tempDir }: start({port, dir, monitor}) starts
// nats-server (port and store dir fresh unless given; monitor: an HTTP
// monitoring port too) and resolves once it is ready; stop(signal) ends it
// and waits for its exit.
export function natsForSuite() {
	const servers = new Set();
	const dirs = new Set();
	// A directory of the suite's, removed with the servers.
	function tempDir(prefix = 'ingot-nats-') {
		const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
		dirs.add(d);
		return d;
	}
	async function start({ port, dir, monitor = false, args = [] } = {}) {
		port ??= await freePort();
		dir ??= tempDir();
		const mport = monitor ? await freePort() : 0;
		const child = spawn(natsServerBin(), ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir,
			...(monitor ? ['-m', String(mport)] : []), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
		let log = '';
		const exited = new Promise((resolve) => child.on('exit', resolve));
		await within(15000, new Promise((resolve, reject) => {
			const watch = (d) => { log += d; if (log.includes('Server is ready')) resolve(); };
			child.stdout.setEncoding('utf8').on('data', watch);
			child.stderr.setEncoding('utf8').on('data', watch);
			exited.then((code) => reject(new Error(`nats-server exited (${code}): ${log}`)));
		}), 'nats-server ready');
		const srv = {
			port, dir, url: `nats://127.0.0.1:${port}`, monitorPort: mport,
			async stop(signal = 'SIGTERM') {
				if (!servers.delete(srv)) return;
				process.kill(child.pid, signal);
				await exited;
			},
			// The JetStream state of stream name ({messages, ...} and its
			// config's replicas), from the monitoring port; null when none.
			async stream(name) {
				const r = await fetch(`http://127.0.0.1:${mport}/jsz?streams=true&config=true`);
				const j = await r.json();
				for (const acc of j.account_details ?? [])
					for (const st of acc.stream_detail ?? [])
						if (st.name === name) return { ...st.state, replicas: st.config?.num_replicas };
				return null;
			},
			// Message seq of stream name, through the JetStream API over
			// the client protocol: {subject, headers (the NATS/1.0 block as
			// text), data (Buffer)}; null when it has none.
			async message(name, seq) {
				const r = await srv.api(`$JS.API.STREAM.MSG.GET.${name}`, { seq });
				if (!r.message) return null;
				return { subject: r.message.subject, headers: Buffer.from(r.message.hdrs ?? '', 'base64').toString('utf8'),
					data: Buffer.from(r.message.data ?? '', 'base64') };
			},
			// A JetStream API call over the client protocol: the reply to
			// body (an object, as JSON) on subject ($JS.API....), parsed.
			async api(subject, body) {
				const sock = net.connect(port, '127.0.0.1');
				let buf = Buffer.alloc(0);
				const answer = new Promise((resolve, reject) => {
					sock.on('error', reject);
					sock.on('data', (d) => {
						buf = Buffer.concat([buf, d]);
						const m = /MSG _INBOX\.api 1 (\d+)\r\n/.exec(buf.toString('latin1'));
						if (!m) return;
						const at = m.index + m[0].length, len = Number(m[1]);
						if (buf.length >= at + len) resolve(JSON.parse(buf.subarray(at, at + len).toString('utf8')));
					});
				});
				const req = JSON.stringify(body);
				sock.write(`CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\nSUB _INBOX.api 1\r\n` +
					`PUB ${subject} _INBOX.api ${Buffer.byteLength(req)}\r\n${req}\r\n`);
				return within(10000, answer, subject).finally(() => sock.destroy());
			},
			// The config of stream's durable consumer name; null when none.
			async consumer(stream, name) {
				const r = await fetch(`http://127.0.0.1:${mport}/jsz?consumers=true&config=true`);
				const j = await r.json();
				for (const acc of j.account_details ?? [])
					for (const st of acc.stream_detail ?? [])
						for (const c of st.consumer_detail ?? [])
							if (st.name === stream && c.name === name) return c.config;
				return null;
			},
		};
		servers.add(srv);
		return srv;
	}
	// n servers in one JetStream cluster on loopback (routes between them);
	// url: the list of their client URLs.
	async function startCluster(n, { monitor = false } = {}) {
		const routes = [];
		for (let i = 0; i < n; i++) routes.push(await freePort());
		const nodes = [];
		for (let i = 0; i < n; i++)
			nodes.push(await start({ monitor, args: ['-n', `node${i}`, '--cluster_name', 'ingot', '--cluster', `nats://127.0.0.1:${routes[i]}`,
				'--routes', routes.filter((_, k) => k !== i).map((p) => `nats://127.0.0.1:${p}`).join(',')] }));
		return { nodes, url: nodes.map((s) => s.url).join(',') };
	}
	async function stopAll() {
		for (const s of [...servers]) await s.stop();
		for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
	}
	return { start, startCluster, stopAll, tempDir };
}
