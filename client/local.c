#include "client/local.h"

#include <czmq.h>
#include <unistd.h>

#include "broker/broker.h"
#include "kernels/assets/asset.h"
#include "worker/worker.h"
#include "shared/socket_new.h"

struct qc_local {
    char endpoint[64];
    qc_broker_t *broker;
    zactor_t *broker_actor;
    qc_worker_t *worker;
};

qc_local_t *
qc_local_start (uint32_t slots, char *err, size_t errlen)
{
    qc_local_config_t cfg = { .slots = slots };
    return qc_local_start_with (&cfg, err, errlen);
}

qc_local_t *
qc_local_start_with (const qc_local_config_t *cfg, char *err, size_t errlen)
{
    uint32_t slots = cfg ? cfg->slots : 0;
    qc_local_t *self = calloc (1, sizeof *self);
    if (!self || !err) {
        if (err) snprintf (err, errlen, "out of memory");
        free (self);
        return NULL;
    }
    /* as in qc-worker: config files come with the job (qc-submit has
     * read them already), never from disk at run time */
    qc_asset_allow_disk (0);
    snprintf (self->endpoint, sizeof self->endpoint, "inproc://qc-local-%d",
              (int) getpid ());
    qc_broker_config_t bc;
    qc_broker_config_defaults (&bc);
    const char *eps[] = {self->endpoint};
    bc.endpoints = eps;
    bc.nendpoints = 1;
    *err = 0;
    unsigned refused = qc_socket_refusals ();
    if (!(self->broker = qc_broker_new (&bc, err, errlen))
        || !(self->broker_actor = qc_actor_new (qc_broker_actor, self->broker,
                                                "the one-process broker"))) {
        if (!qc_refusal_say (refused, err, errlen) && !*err)
            snprintf (err, errlen, "cannot start the one-process broker");
        qc_local_stop (&self);
        return NULL;
    }
    qc_worker_config_t wc;
    qc_worker_config_defaults (&wc);
    wc.endpoint = self->endpoint;
    wc.name = "local";
    if (slots)
        wc.slots = slots;
    wc.cache_dir = cfg ? cfg->cache_dir : NULL;
    wc.cache_max = cfg ? cfg->cache_max : 0;
    if (cfg && cfg->http_stall_s)
        wc.http_stall_s = cfg->http_stall_s;
    if (cfg && cfg->http_attempts)
        wc.http_attempts = cfg->http_attempts;
    if (!(self->worker = qc_worker_new (&wc))) {
        /* its own records went to no one (they come back through the
           stream, which is not up yet): the likely cause is told here */
        if (!qc_refusal_say (refused, err, errlen))
            snprintf (err, errlen, "cannot start the local worker");
        qc_local_stop (&self);
        return NULL;
    }
    return self;
}

const char *
qc_local_slots_note (const qc_local_t *self)
{
    return self ? qc_worker_slots_note (self->worker) : NULL;
}

const char *
qc_local_endpoint (const qc_local_t *self)
{
    return self ? self->endpoint : NULL;
}

void
qc_local_stop (qc_local_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    qc_local_t *self = *self_p;
    qc_worker_destroy (&self->worker);
    zactor_destroy (&self->broker_actor);
    qc_broker_destroy (&self->broker);
    free (self);
    *self_p = NULL;
}
