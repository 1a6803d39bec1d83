#include "fureru/base.h"

#include "fr_config.h"

const char *fr_strerror(int err)
{
    switch (err) {
    case FR_OK:
        return "success";
    case FR_ERR_NOMEM:
        return "out of memory";
    case FR_ERR_INVAL:
        return "invalid argument";
    case FR_ERR_RANGE:
        return "value out of range";
    case FR_ERR_IO:
        return "input/output error";
    case FR_ERR_PARSE:
        return "malformed input";
    case FR_ERR_NOTFOUND:
        return "not found";
    case FR_ERR_STALE:
        return "stale or invalid id";
    case FR_ERR_FULL:
        return "capacity exhausted";
    case FR_ERR_LOCKED:
        return "world is locked while stepping";
    case FR_ERR_DEVICE:
        return "device failure";
    case FR_ERR_TIMEOUT:
        return "timed out";
    case FR_ERR_UNSUPPORTED:
        return "not supported";
    case FR_ERR_NUMERIC:
        return "numerical failure (NaN, Inf or divergence)";
    case FR_ERR_DISCONNECTED:
        return "device disconnected";
    case FR_ERR_PERM:
        return "permission denied";
    default:
        return "unknown error";
    }
}

const char *fr_version(void)
{
    return FR_VERSION;
}
