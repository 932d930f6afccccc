// qemu's guestfwd command (images/qemu QEMU_GUESTFWD): qemu runs it for
// each connection the guest makes to the forwarded address, with that
// connection on stdin and stdout (stderr too: this prints nothing), and it
// pipes the bytes to and from 127.0.0.1:PORT. The one hole in the user
// network's restrict=on: a test's own service on the host's loopback.
//   node tcp_pipe.mjs PORT
import net from 'node:net';

const upstream = net.connect({ host: '127.0.0.1', port: Number(process.argv[2]) });
process.stdin.pipe(upstream);
upstream.pipe(process.stdout);
process.stdin.on('end', () => upstream.end());
upstream.on('close', () => process.exit(0));
upstream.on('error', () => process.exit(1));
process.stdout.on('error', () => process.exit(1));
