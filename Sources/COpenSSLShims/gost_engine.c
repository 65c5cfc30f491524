/*
 * The GOST engine (gost-engine's engines-3/gost.so, Debian package libengine-gost-openssl).
 *
 * OpenSSL 3 deprecates the ENGINE API, but gost-engine's provider (gostprov) has no key management
 * and no signatures, so GOST R 34.10-2012 keys only work through the engine. This file is the only
 * place in the package that calls the deprecated API, and the only place the deprecation is
 * silenced. Swift calls it once, through CertificateProviders' GOSTEngine.
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "COpenSSLShims.h"
#include <openssl/ec.h>
#include <openssl/engine.h>
#include <openssl/err.h>

int COpenSSLShims_GOST_engine_load(void) {
    ENGINE *engine = ENGINE_by_id("gost");
    if (engine == NULL) return 0;
    if (ENGINE_init(engine) != 1) {
        ENGINE_free(engine);
        return 0;
    }
    /* The functional reference from ENGINE_init keeps the engine loaded for the life of the process;
     * the structural one from ENGINE_by_id is not needed any more. */
    int ok = ENGINE_set_default(engine, ENGINE_METHOD_ALL) == 1;
    if (!ok) ENGINE_finish(engine);
    ENGINE_free(engine);
    return ok;
}

int COpenSSLShims_GOST_key_paramset_nid(const EVP_PKEY *key) {
    int type = EVP_PKEY_get_base_id(key);
    if (type != NID_id_GostR3410_2012_256 && type != NID_id_GostR3410_2012_512 && type != NID_id_GostR3410_2001) return NID_undef;
    /* gost-engine keeps GOST keys as EC_KEYs whose group is the parameter set. */
    const EC_KEY *ec = EVP_PKEY_get0((EVP_PKEY *)key);
    if (ec == NULL) return NID_undef;
    const EC_GROUP *group = EC_KEY_get0_group(ec);
    return group == NULL ? NID_undef : EC_GROUP_get_curve_name(group);
}
