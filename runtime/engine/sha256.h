/* sha256.h - SHA-256 (FIPS 180-4), for the audit report's input digest.
 * Ours rather than libcrypto's: linking libcrypto cost every graft process
 * about a millisecond of dynamic relocation before main, for one hash. */
#ifndef GRAFT_SHA256_H
#define GRAFT_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct Sha256 {
	uint32_t h[8];
	uint64_t len;          /* bytes hashed so far */
	uint8_t block[64];
	size_t used;           /* bytes waiting in block */
} Sha256;

void sha256_init(Sha256 *s);
void sha256_update(Sha256 *s, const void *data, size_t len);
void sha256_final(Sha256 *s, uint8_t digest[32]);

#endif
