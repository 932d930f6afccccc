// A DHCP server for one client on a TAP's Linux end (tests of the hosted
// lwIP stack): it offers one address, with a netmask, a router and the
// nameservers (option 6) the test gives, and acknowledges the request.
// Replies are broadcast from the TAP's address (Linux sends a limited
// broadcast out of the device that holds the source address), so no route
// or ARP entry for the client is needed. Runs in the test's own namespace.
import dgram from 'node:dgram';

const COOKIE = 0x63825363;
const OPT = { MASK: 1, ROUTER: 3, DNS: 6, LEASE: 51, TYPE: 53, SERVER_ID: 54, END: 255 };
const DISCOVER = 1, OFFER = 2, REQUEST = 3, ACK = 5;

const ip4 = (s) => s.split('.').map(Number);

function parse(msg) {
	if (msg.length < 240 || msg[0] !== 1 || msg.readUInt32BE(236) !== COOKIE) return null;
	const opts = new Map();
	for (let o = 240; o < msg.length;) {
		const code = msg[o++];
		if (code === 0) continue;
		if (code === OPT.END || o >= msg.length) break;
		const len = msg[o++];
		opts.set(code, msg.subarray(o, o + len));
		o += len;
	}
	const type = opts.get(OPT.TYPE)?.[0];
	return type ? { type, xid: msg.readUInt32BE(4), chaddr: msg.subarray(28, 44), flags: msg.readUInt16BE(10),
		requested: opts.get(55) } : null;
}

function reply(q, type, { server, addr, prefix, router, dns }) {
	const head = Buffer.alloc(240);
	head[0] = 2; head[1] = 1; head[2] = 6;
	head.writeUInt32BE(q.xid, 4);
	head.writeUInt16BE(q.flags, 10);
	Buffer.from(ip4(addr)).copy(head, 16);   // yiaddr
	Buffer.from(ip4(server)).copy(head, 20); // siaddr
	q.chaddr.copy(head, 28);
	head.writeUInt32BE(COOKIE, 236);
	const mask = (0xffffffff << (32 - prefix)) >>> 0;
	const opt = (code, bytes) => Buffer.from([code, bytes.length, ...bytes]);
	const parts = [head, opt(OPT.TYPE, [type]), opt(OPT.SERVER_ID, ip4(server)),
		opt(OPT.LEASE, [0, 0, 0x0e, 0x10]), opt(OPT.MASK, [mask >>> 24, (mask >>> 16) & 255, (mask >>> 8) & 255, mask & 255]),
		opt(OPT.ROUTER, ip4(router))];
	if (dns.length) parts.push(opt(OPT.DNS, dns.flatMap(ip4)));
	parts.push(Buffer.from([OPT.END]));
	return Buffer.concat(parts);
}

/** Serves {server (the TAP's address), addr, prefix, router, dns: [...]}:
 * h.requests lists each message's type and the options it asked for (55);
 * h.acked once an ACK went out; h.close(). */
export async function startDhcp(lease) {
	const h = { requests: [], acked: false };
	const listen = dgram.createSocket({ type: 'udp4', reuseAddr: true });
	const send = dgram.createSocket({ type: 'udp4', reuseAddr: true });
	listen.on('message', (msg) => {
		const q = parse(msg);
		if (!q) return;
		h.requests.push({ type: q.type, asked: q.requested ? [...q.requested] : [] });
		const type = q.type === DISCOVER ? OFFER : q.type === REQUEST ? ACK : 0;
		if (!type) return;
		send.send(reply(q, type, lease), 68, '255.255.255.255', () => { if (type === ACK) h.acked = true; });
	});
	await new Promise((resolve) => listen.bind(67, '0.0.0.0', resolve));
	await new Promise((resolve) => send.bind(67, lease.server, resolve));
	send.setBroadcast(true);
	h.close = () => Promise.all([listen, send].map((s) => new Promise((resolve) => s.close(resolve))));
	return h;
}
