// OpenSSL 3's libcrypto, for LulucatCrypto's Linux backend (Apple platforms use CryptoKit and
// never build this module: Package.swift, docs/platforms.md).
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <openssl/params.h>
#include <openssl/core_names.h>
#include <openssl/hmac.h>
