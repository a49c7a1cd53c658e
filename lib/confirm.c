/*
 * confirm.c: a claim made on a Galera node, read on another node of the
 * list before its jobs are handed out.
 *
 * Galera can lose a transaction it reported committed: a node whose
 * group communication fails may have committed write sets that the
 * others never receive, and a cluster formed again without that node's
 * last state has no trace of them (mq-galera(7), WHAT THE RUNS FOUND;
 * Jepsen's analysis of 12.1-12.2, MDEV-38974). A claim lost that way
 * leaves its jobs ready on the other nodes, which claim them again with
 * the same attempt: two consumers run one job at once, and the lease
 * token only refuses the first one's ack, after the fact.
 *
 * So a claim's jobs are handed out once another node, Synced in the
 * primary component, shows them leased with the claim's token, read
 * after it applied what the cluster committed before the read
 * (wsrep_sync_wait): a write set two nodes applied is the cluster's, not
 * one node's. A job that node shows otherwise is not handed out: if the
 * claim was the cluster's after all, its lease ends as a lost
 * consumer's does. The other node is found in the list of hosts the
 * connection came from (a single host, a proxy say, gives none: nothing
 * is read). A cluster of one node has nobody to ask; where others are
 * members but none can be asked, the claim fails (the caller gives its
 * jobs back). One read a claim, of all its jobs. Nodes are told apart by
 * their group communication's uuid, not by a host name: containers
 * share those.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* A node that does not answer within this long is not asked (a causal
 * read waits for the node to apply what came before it) */
#define CONFIRM_TIMEOUT_S 5

/* Who a node is (its group communication's uuid), which cluster's
 * history it holds, whether it is a member of the primary component
 * that takes statements (Synced or not: a donor applies what comes, and
 * a node far behind is left by the read's timeout), and the cluster's
 * size as it sees it: a row, its third column NULL when ready. */
static const char sql_node[] =
    "SELECT (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
    " WHERE VARIABLE_NAME = 'wsrep_gcomm_uuid'),"
    " (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
    " WHERE VARIABLE_NAME = 'wsrep_cluster_state_uuid'),"
    " (SELECT GROUP_CONCAT(VARIABLE_NAME, ' ', VARIABLE_VALUE)"
    " FROM information_schema.GLOBAL_STATUS"
    " WHERE VARIABLE_NAME IN ('wsrep_ready', 'wsrep_cluster_status')"
    " AND VARIABLE_VALUE NOT IN ('ON', 'Primary')),"
    " (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
    " WHERE VARIABLE_NAME = 'wsrep_cluster_size')";

/* The jobs of a claim leased with one token, read by id on the other
 * node, waiting for it to apply the cluster's commits first */
static const char sql_seen[] =
    "SELECT id FROM `{{TABLE}}` FORCE INDEX (PRIMARY)"
    " WHERE state = 'leased' AND lease_token = ? AND id IN (";

/* Reads db's struct node; 0 if it cannot be read. */
static int
read_node(MYSQL *db, struct mq__node *n)
{
	MYSQL_RES *res;
	MYSQL_ROW row;
	int ok = 0;

	memset(n, 0, sizeof *n);
	if (mysql_real_query(db, sql_node, sizeof sql_node - 1) != 0 ||
	    (res = mysql_store_result(db)) == NULL)
		return 0;
	if ((row = mysql_fetch_row(res)) != NULL && row[0] && row[1]) {
		snprintf(n->gcomm, sizeof n->gcomm, "%s", row[0]);
		snprintf(n->cluster, sizeof n->cluster, "%s", row[1]);
		if (row[2])
			snprintf(n->not_ready, sizeof n->not_ready,
			    "not ready (%.120s)", row[2]);
		if (row[3])
			snprintf(n->size, sizeof n->size, "%s", row[3]);
		ok = 1;
	}
	mysql_free_result(res);
	return ok;
}

/* A node's name (@@hostname:@@port) as said to a terminal. */
static const char *
shown(const char *server, char *buf, size_t size)
{
	char *p;

	snprintf(buf, size, "%s", server);
	for (p = buf; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
	return buf;
}

/* Appends "; host: what" to why (bounded). */
static void
add_why(char *why, size_t size, const char *host, const char *what)
{
	size_t n = strlen(why);

	if (n + 8 < size)
		snprintf(why + n, size - n, "%s%.60s: %.200s", n ? "; " : "",
		    host, what);
}

/* The node c is on: who it is and its cluster, read once a connection
 * (a claim then costs no round trip on it); its readiness is not kept
 * (read fresh where it matters). */
static int
self_node(struct mq_conn *c, struct mq__node *self)
{
	memset(self, 0, sizeof *self);
	if (!*c->self_node.gcomm && !read_node(c->db, &c->self_node))
		return 0;
	memcpy(self->gcomm, c->self_node.gcomm, sizeof self->gcomm);
	memcpy(self->cluster, c->self_node.cluster, sizeof self->cluster);
	return 1;
}

/* A connection to a node of c's list other than c's (self) and than
 * those in skip (gcomm uuids, ";"-separated), a member of c's cluster in
 * its primary component, set up for c's table as every connection is;
 * NULL if none: why says of each, *limit set to a refusal for want of
 * connections (the server's max_connections) if one came. */
#define ENTRIES_KEPT 64	/* entries of a list whose failures are kept */

static struct mq_conn *
connect_other(struct mq_conn *c, const struct mq__node *self, const char *skip,
    unsigned char *passed, char *why, size_t size, struct mq_error *limit)
{
	struct mq_connopts o = c->opts;
	struct mq_conn *other;
	struct mq_error e;
	struct mq__node nd;
	char host[256], spec[300];
	unsigned port;
	size_t n, k, i;

	for (n = 0; mq__host_entry(c->list, n, host, sizeof host, &port,
	    &e) == MQ_OK; n++)
		;
	o.host_random = 0;
	o.nonblock = 0;
	o.long_statements = 0;
	o.connect_timeout_s = CONFIRM_TIMEOUT_S;
	o.read_timeout_s = CONFIRM_TIMEOUT_S;
	/* from an entry drawn by the process id on: the readers spread */
	for (k = 0; k < n; k++) {
		i = ((size_t)getpid() + k) % n;
		/* an entry that failed, or was c's own node, in this claim's
		 * confirmation is not connected to again */
		if ((i < ENTRIES_KEPT && passed[i]) || mq__host_entry(c->list,
		    i, host, sizeof host, &port, &e) != MQ_OK)
			continue;
		if (i < ENTRIES_KEPT)
			passed[i] = 1;	/* cleared below if it is used */
		snprintf(spec, sizeof spec, strchr(host, ':') ? "[%s]" : "%s",
		    host);
		if (port)
			snprintf(spec + strlen(spec), sizeof spec -
			    strlen(spec), ":%u", port);
		o.host = spec;
		if ((other = mq_connect(&o, &e)) == NULL) {
			add_why(why, size, spec, e.msg);
			if (mq_conn_limit(&e) && limit->status == MQ_OK)
				*limit = e;
			continue;
		}
		other->opts.host = NULL;	/* spec ends with this call */
		if (!read_node(other->db, &nd) || !*nd.gcomm ||
		    strcmp(nd.gcomm, self->gcomm) == 0 ||
		    strstr(skip, nd.gcomm) != NULL) {
			mq_close(other);	/* c's own node, or skip's */
			continue;
		}
		if (strcmp(nd.cluster, self->cluster) != 0 || *nd.not_ready) {
			add_why(why, size, spec, *nd.not_ready ? nd.not_ready :
			    "a node of another cluster");
			mq_close(other);
			continue;
		}
		/* the session every connection has (autocommit, isolation,
		 * limits: schema.c), the table checked */
		if (mq_use_table(other, c->table) != MQ_OK) {
			add_why(why, size, spec, mq_conn_error(other)->msg);
			mq_close(other);
			continue;
		}
		memcpy(other->confirm_node, nd.gcomm, sizeof nd.gcomm);
		if (i < ENTRIES_KEPT)
			passed[i] = 0;
		return other;
	}
	return NULL;
}

/* Reads which of jobs[0..n) the other node shows leased with their
 * tokens: seen[i] set for those. */
static enum mq_status
read_seen(struct mq_conn *o, const struct mq_job *jobs, size_t n,
    unsigned char *seen)
{
	MYSQL_BIND pre[1];
	unsigned long toklen = MQ_TOKEN_LEN;
	uint64_t *ids, *got;
	size_t i, j, k, m, ngot;
	enum mq_status rc = MQ_OK;

	memset(seen, 0, n);
	ids = malloc(n * sizeof *ids);
	got = malloc(n * sizeof *got);
	if (ids == NULL || got == NULL) {
		free(ids);
		free(got);
		return mq__fail(o, MQ_ENOMEM, "out of memory");
	}
	if ((rc = mq__see_cluster(o)) != MQ_OK)
		goto out;
	/* one read a token (a claim has one, or one a queue of its list) */
	for (i = 0; i < n && rc == MQ_OK; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(jobs[j].receipt.token,
			    jobs[i].receipt.token) == 0)
				break;
		if (j < i)
			continue;	/* read with the first of its token */
		for (m = 0, k = i; k < n; k++)
			if (strcmp(jobs[k].receipt.token,
			    jobs[i].receipt.token) == 0)
				ids[m++] = jobs[k].id;
		memset(pre, 0, sizeof pre);
		mq__bind_str(&pre[0], jobs[i].receipt.token, &toklen);
		rc = mq__select_ids_in(o, sql_seen, ")", pre, 1, ids, m, got,
		    n, &ngot);
		for (k = i; rc == MQ_OK && k < n; k++)
			for (j = 0; j < ngot; j++)
				if (got[j] == jobs[k].id &&
				    strcmp(jobs[k].receipt.token,
				    jobs[i].receipt.token) == 0)
					seen[k] = 1;
	}
out:
	free(ids);
	free(got);
	return rc;
}

/* Drops the jobs not seen (their payloads freed), saying which. */
static enum mq_status
drop_unseen(struct mq_conn *c, struct mq_job *jobs, size_t *n,
    const unsigned char *seen, const char *node)
{
	char list[160] = "";
	size_t i, kept = 0, dropped = 0, len;

	for (i = 0; i < *n; i++) {
		if (seen[i]) {
			jobs[kept++] = jobs[i];
			continue;
		}
		len = strlen(list);
		if (dropped < 8 && len + 24 < sizeof list)
			snprintf(list + len, sizeof list - len, "%s%llu",
			    dropped ? ", " : "",
			    (unsigned long long)jobs[i].id);
		else if (dropped == 8)
			snprintf(list + len, sizeof list - len, ", ...");
		free(jobs[i].payload);
		dropped++;
	}
	*n = kept;
	if (dropped == 0)
		return MQ_OK;
	snprintf(c->unconfirmed, sizeof c->unconfirmed, "the claim of job%s "
	    "%s is not seen on another node (%.100s) once it caught up: the "
	    "cluster lost it, or the lease was taken back; not handed out",
	    dropped > 1 ? "s" : "", list, node);
	if (kept == 0)
		return mq__fail(c, MQ_EUNKNOWN, "%s", c->unconfirmed);
	return MQ_OK;
}

enum mq_status
mq__confirm_claim(struct mq_conn *c, struct mq_job *jobs, size_t *n)
{
	char why[400] = "", skip[200] = "", name[128];
	unsigned char passed[ENTRIES_KEPT] = { 0 };
	struct mq_error limit = { .status = MQ_OK };
	struct mq__node self, now;
	unsigned char *seen;
	enum mq_status rc = MQ_EUNAVAIL;
	int tries, fresh;

	c->unconfirmed[0] = '\0';
	if (!c->galera || c->hosts < 2 || c->list[0] == '\0' || *n == 0)
		return MQ_OK;
	if ((seen = malloc(*n)) == NULL)
		return mq__fail(c, MQ_ENOMEM, "out of memory");
	if (!self_node(c, &self)) {
		free(seen);
		return mq__dberr(c, NULL, "cannot read which node this is");
	}
	/* the node asked last (its connection kept: it may have been
	 * closed since, then made again), else each other one in turn */
	for (tries = 0; tries < 8; tries++) {
		fresh = c->confirm == NULL;
		if (fresh && (c->confirm = connect_other(c, &self, skip,
		    passed, why, sizeof why, &limit)) == NULL)
			break;
		if ((rc = read_seen(c->confirm, jobs, *n, seen)) == MQ_OK)
			break;
		if (fresh) {
			add_why(why, sizeof why, shown(c->confirm->server,
			    name, sizeof name), mq_conn_error(c->confirm)->msg);
			if (strlen(skip) + strlen(c->confirm->confirm_node) +
			    2 < sizeof skip)
				snprintf(skip + strlen(skip), sizeof skip -
				    strlen(skip), "%s;",
				    c->confirm->confirm_node);
		}
		mq_close(c->confirm);
		c->confirm = NULL;
	}
	if (rc == MQ_OK) {
		rc = drop_unseen(c, jobs, n, seen, shown(c->confirm->server,
		    name, sizeof name));
		free(seen);
		return rc;
	}
	free(seen);
	/* nobody else in the cluster: nothing to lose the claim to; but a
	 * node cut off alone sees a cluster of one too: it must be the
	 * primary component, and ready */
	if (read_node(c->db, &now) && !*now.not_ready &&
	    strcmp(now.size, "1") == 0)
		return MQ_OK;
	snprintf(c->unconfirmed, sizeof c->unconfirmed, "the claim cannot "
	    "be confirmed on another node of the cluster: %s", *why ? why :
	    "no other node in the list");
	rc = mq__fail(c, MQ_EUNAVAIL, "%s", c->unconfirmed);
	/* the server's limit on connections, said as such (the caller backs
	 * off for it) */
	c->err.db_errno = limit.db_errno;
	memcpy(c->err.sqlstate, limit.sqlstate, sizeof c->err.sqlstate);
	return rc;
}
