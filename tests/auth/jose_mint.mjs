// Mints JWTs with npm's jose (and three with the openssl command line) for net/auth's unit test (test_jwt reads the
// fixture this writes: tests/integration/jwt_jose.test.mjs runs both).
// Usage: node tests/auth/jose_mint.mjs OUT. OUT's first line is the JWKS
// of every key (public parts, and the oct key's secret), then one line per
// token: the error kind net/auth must give, the clock (Unix seconds) to
// verify at, a label, the token.
import { SignJWT, generateKeyPair, exportJWK } from 'jose';
import { randomBytes } from 'node:crypto';
import { createPublicKey } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const out = process.argv[2];
if (!out) throw new Error('usage: jose_mint.mjs OUT');
const NOW = 1800000000;
const ISS = 'https://jose.test', AUD = 'ingot';

const keys = [];
const signers = {};
for (const [alg, opts] of [['RS256', { modulusLength: 2048 }], ['RS512', { modulusLength: 3072 }], ['ES256', {}], ['ES384', {}]]) {
	const { publicKey, privateKey } = await generateKeyPair(alg, { ...opts, extractable: true });
	const jwk = await exportJWK(publicKey);
	jwk.kid = `${alg.toLowerCase()}-key`;
	jwk.use = 'sig';
	jwk.alg = alg;
	keys.push(jwk);
	signers[alg] = { key: privateKey, kid: jwk.kid };
}
const secret = randomBytes(64); // HS384 needs 48 bytes or more (RFC 7518 3.2)
keys.push({ kty: 'oct', kid: 'hs-key', k: secret.toString('base64url') });
signers.HS256 = { key: secret, kid: 'hs-key' };
signers.HS384 = { key: secret, kid: 'hs-key' };

async function mint(alg, { kid = true, claims = {}, iss = ISS, aud = AUD, exp = NOW + 600, nbf } = {}) {
	const s = signers[alg];
	let j = new SignJWT({ scope: 'reports:read', ...claims })
		.setProtectedHeader({ alg, typ: 'JWT', ...(kid ? { kid: s.kid } : {}) })
		.setSubject('user-1').setIssuedAt(NOW).setIssuer(iss).setAudience(aud).setExpirationTime(exp);
	if (nbf !== undefined) j = j.setNotBefore(nbf);
	return j.sign(s.key);
}

const lines = [JSON.stringify({ keys })];
const add = (want, label, token, now = NOW) => lines.push(`${want} ${now} ${label} ${token}`);
for (const alg of ['HS256', 'HS384', 'RS256', 'RS512', 'ES256', 'ES384']) {
	add('ok', `${alg}-with-kid`, await mint(alg));
	add('ok', `${alg}-without-kid`, await mint(alg, { kid: false }));
	add('expired', `${alg}-expired`, await mint(alg), NOW + 700);
}
add('ok', 'aud-array', await mint('ES256', { aud: ['other', AUD] }));
add('wrong_audience', 'wrong-aud', await mint('ES256', { aud: 'other' }));
add('wrong_issuer', 'wrong-iss', await mint('RS256', { iss: 'https://evil.test' }));
add('not_yet_valid', 'nbf-future', await mint('ES384', { nbf: NOW + 300 }));
add('ok', 'nbf-within-leeway', await mint('ES384', { nbf: NOW + 30 }));
// One key's signature under another's kid.
const es = await mint('ES256');
const [h, p, sig] = es.split('.');
const other = (await mint('ES256', { claims: { scope: 'x' } })).split('.')[2];
add('bad_signature', 'es256-swapped-signature', `${h}.${p}.${other}`);
const flip = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
add('bad_signature', 'es256-tampered-payload', `${h}.${flip(p, 10)}.${sig}`);

// Tokens signed by the openssl command line (RS256 with PKCS#1 v1.5,
// HS256, ES256), with the keys' JWKS entries made from openssl's PEM by
// node.
function derToRaw(der, size) {
	// 30 len 02 rlen r 02 slen s (short lengths: a P-256 signature is < 128 bytes)
	let i = 2;
	const part = () => {
		if (der[i] !== 2) throw new Error('not a DER ECDSA signature');
		const n = der[i + 1];
		let v = der.subarray(i + 2, i + 2 + n);
		i += 2 + n;
		while (v.length > size && v[0] === 0) v = v.subarray(1);
		return Buffer.concat([Buffer.alloc(size - v.length), v]);
	};
	return Buffer.concat([part(), part()]);
}
const dir = mkdtempSync(join(tmpdir(), 'jose-mint-'));
try {
	const pem = join(dir, 'rsa.pem'), input = join(dir, 'input');
	execFileSync('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', pem], { stdio: 'ignore' });
	const jwk = createPublicKey(readFileSync(pem)).export({ format: 'jwk' });
	keys.push({ ...jwk, kid: 'openssl-rsa' });
	lines[0] = JSON.stringify({ keys });
	const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
	const claims = b64({ iss: ISS, aud: AUD, sub: 'openssl', exp: NOW + 600 });
	const rsInput = `${b64({ alg: 'RS256', kid: 'openssl-rsa' })}.${claims}`;
	writeFileSync(input, rsInput);
	const rsSig = execFileSync('openssl', ['dgst', '-sha256', '-sign', pem, input]);
	add('ok', 'openssl-RS256', `${rsInput}.${rsSig.toString('base64url')}`);
	const hsInput = `${b64({ alg: 'HS256', kid: 'hs-key' })}.${claims}`;
	writeFileSync(input, hsInput);
	const hsSig = execFileSync('openssl', ['dgst', '-sha256', '-mac', 'HMAC', '-macopt', `hexkey:${secret.toString('hex')}`, '-binary', input]);
	add('ok', 'openssl-HS256', `${hsInput}.${hsSig.toString('base64url')}`);
	// ES256: openssl writes the signature as DER (SEQUENCE of INTEGER r, s);
	// a JWS carries r || s, each 32 bytes.
	const ecPem = join(dir, 'ec.pem');
	execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', ecPem], { stdio: 'ignore' });
	keys.push({ ...createPublicKey(readFileSync(ecPem)).export({ format: 'jwk' }), kid: 'openssl-ec' });
	lines[0] = JSON.stringify({ keys });
	const esInput = `${b64({ alg: 'ES256', kid: 'openssl-ec' })}.${claims}`;
	writeFileSync(input, esInput);
	const der = execFileSync('openssl', ['dgst', '-sha256', '-sign', ecPem, input]);
	add('ok', 'openssl-ES256', `${esInput}.${derToRaw(der, 32).toString('base64url')}`);
} finally {
	rmSync(dir, { recursive: true, force: true });
}
writeFileSync(out, lines.join('\n') + '\n');
