#ifndef C_POSTGRES_SHIM_H
#define C_POSTGRES_SHIM_H
/* libpq (libpq-dev) for the signature journal's PostgreSQL backend. */
#include <libpq-fe.h>
#endif
