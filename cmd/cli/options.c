/*
 * options.c: one parser for every command's option table, in GNU order,
 * and the options all commands share. An error names the option as the
 * user typed it.
 */
#include <string.h>

#include "cli/cli.h"
#include "output/output.h"

/* an option's value; an empty one is a usage error */
static const char *
value(const struct command *cmd, const char *opt, const char *arg)
{
	if (*arg == '\0')
		usage_error(cmd, "--%s needs a non-empty value", opt);
	return arg;
}

/* A shared option's value into g. */
static void
apply_shared(const struct command *cmd, const struct opt *o, const char *arg,
    struct mq_global *g)
{
	struct mq_connopts *c = &g->conn;

	switch (o->id) {
	case OPT_DEFAULTS_FILE:	c->defaults_file = value(cmd, o->name, arg);
		break;
	case OPT_HOST:		c->host = value(cmd, o->name, arg); break;
	case OPT_HOST_ORDER:
		if (strcmp(arg, "first") != 0 && strcmp(arg, "random") != 0)
			usage_error(cmd, "--host-order: '%s' is neither first "
			    "nor random", shown(arg));
		c->host_random = strcmp(arg, "random") == 0;
		g->host_order_env = NULL;	/* the option wins */
		break;
	case OPT_PORT:
		c->port = (unsigned)int_arg(cmd, "--port", arg, 1, 65535);
		break;
	case OPT_SOCKET:	c->socket = value(cmd, o->name, arg); break;
	case OPT_USER:		c->user = value(cmd, o->name, arg); break;
	case OPT_DATABASE:	c->database = value(cmd, o->name, arg); break;
	case OPT_SSL_CA:	c->ssl_ca = value(cmd, o->name, arg); break;
	case OPT_SSL_CAPATH:	c->ssl_capath = value(cmd, o->name, arg); break;
	case OPT_SSL_CERT:	c->ssl_cert = value(cmd, o->name, arg); break;
	case OPT_SSL_KEY:	c->ssl_key = value(cmd, o->name, arg); break;
	case OPT_SSL_CIPHER:	c->ssl_cipher = value(cmd, o->name, arg); break;
	case OPT_SSL_VERIFY_SERVER_CERT: c->ssl_verify_server_cert = 1; break;
	case OPT_TABLE:
		check_table(cmd, "--table", arg);
		g->table = arg;
		g->table_env = NULL;	/* the option wins */
		break;
	case OPT_QUEUE:
		check_queue(cmd, g, "--queue", arg);
		g->queue = arg;
		g->queue_env = NULL;
		break;
	}
}

/* Exits 64 with "mq CMD: <what> '<typed>' (see 'mq CMD -h')". */
static void
option_error(const struct command *cmd, const char *what, const char *typed,
    const char *after)
{
	if (cmd->flags & CMD_MAIN)
		usage_error(cmd, "%s '%s'%s (see 'mq -h')", what,
		    shown(typed), after);
	usage_error(cmd, "%s '%s'%s (see 'mq %s -h')", what,
	    shown(typed), after, cmd->name);
}

/* The row of a long option: an exact name, else the one row whose name
 * it begins (getopt_long's abbreviations); hidden rows by exact name. */
static const struct opt *
find_long(const struct command *cmd, const char *name, size_t len,
    const char *typed)
{
	const struct opt *tables[2], *o, *hit;
	int t, pass, n, nt = option_tables(cmd, tables);

	for (pass = 0; pass < 2; pass++) {
		hit = NULL;
		n = 0;
		for (t = 0; t < nt; t++)
			for (o = tables[t]; o->name; o++) {
				if (strncmp(o->name, name, len) != 0 ||
				    (pass == 0 && o->name[len] != '\0') ||
				    (pass == 1 && (o->flags & OPT_HIDDEN)))
					continue;
				hit = o;
				n++;
			}
		if (n > 1)
			option_error(cmd, "ambiguous option", typed, "");
		if (hit)
			return hit;
	}
	return NULL;
}

static const struct opt *
find_short(const struct command *cmd, char c)
{
	const struct opt *tables[2], *o;
	int t, nt = option_tables(cmd, tables);

	for (t = 0; t < nt; t++)
		for (o = tables[t]; o->name; o++)
			if (o->short_name == c && c)
				return o;
	return NULL;
}

static void
apply(const struct command *cmd, const struct opt *o, const char *arg,
    struct mq_global *g, option_fn *fn, void *ctx)
{
	if (o->id == 'h' && !(cmd->flags & CMD_OWN_HELP))
		help_exit(cmd);
	if (o->id >= OPT_COMMON && o->id < OPT_CMD) {
		apply_shared(cmd, o, arg, g);
		if (o->id != OPT_QUEUE)
			return;
	}
	if (fn)
		fn(ctx, o->id, arg);
}

/* argv[i], "--name[=value]"; returns the index of its last word. */
static int
long_option(const struct command *cmd, int argc, char **argv, int i,
    struct mq_global *g, option_fn *fn, void *ctx)
{
	char *a = argv[i], *eq = strchr(a, '='), typed[80];
	size_t len = eq ? (size_t)(eq - a) - 2 : strlen(a) - 2;
	const struct opt *o = len ? find_long(cmd, a + 2, len, a) : NULL;

	if (o == NULL)
		option_error(cmd, "unknown option", a, "");
	snprintf(typed, sizeof typed, "%.*s", (int)len + 2, a);
	if (o->arg == NULL && eq)
		option_error(cmd, "option", typed, " takes no value");
	if (o->arg && eq == NULL && i + 1 >= argc)
		option_error(cmd, "option", typed, " needs a value");
	apply(cmd, o, o->arg == NULL ? NULL : eq ? eq + 1 : argv[++i], g, fn,
	    ctx);
	return i;
}

/* argv[i], "-abc" or "-oFILE" or "-o FILE". */
static int
short_options(const struct command *cmd, int argc, char **argv, int i,
    struct mq_global *g, option_fn *fn, void *ctx)
{
	char *a = argv[i], typed[3] = "-";
	const struct opt *o;
	int j;

	for (j = 1; a[j]; j++) {
		typed[1] = a[j];
		if ((o = find_short(cmd, a[j])) == NULL)
			option_error(cmd, "unknown option", typed, "");
		if (o->arg == NULL) {
			apply(cmd, o, NULL, g, fn, ctx);
			continue;
		}
		if (a[j + 1])
			apply(cmd, o, a + j + 1, g, fn, ctx);
		else if (i + 1 < argc)
			apply(cmd, o, argv[++i], g, fn, ctx);
		else
			option_error(cmd, "option", typed, " needs a value");
		break;
	}
	return i;
}


const struct command *const *commands;
const struct command *mq_main;

void
register_commands(const struct command *mq, const struct command *const *list)
{
	mq_main = mq;
	commands = list;
}

const struct command *
find_command_spec(const char *name)
{
	size_t i;

	for (i = 0; commands && commands[i]; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

/* The command named after mq's own options in argv, or NULL: the word
 * after them, each option's value skipped, as parse_options() will read
 * them. Found before they are read, so that a bad one before the
 * command name is that command's usage error (mq --port 0 check: the
 * UNKNOWN of mq check). Never exits: an unknown or ambiguous option is
 * passed over. */
static const struct command *
command_named(const struct command *cmd, int argc, char **argv)
{
	const struct opt *tables[2] = { cmd->opts, shared_opts }, *o, *hit;
	const char *a, *eq;
	size_t len;
	int i, j, t, n;

	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (strcmp(a, "--") == 0)
			return i + 1 < argc ? find_command_spec(argv[i + 1]) :
			    NULL;
		/* a word that names no command may be the value of an
		 * option this scan does not know (mq --queue mail check):
		 * the command is the first word that names one */
		if ((a[0] != '-' || a[1] == '\0') && find_command_spec(a))
			return find_command_spec(a);
		if (a[0] != '-' || a[1] == '\0')
			continue;
		if (a[1] == '-') {
			eq = strchr(a, '=');
			len = eq ? (size_t)(eq - a) - 2 : strlen(a) - 2;
			hit = NULL;
			n = 0;
			for (t = 0; t < 2; t++)
				for (o = tables[t]; o->name; o++)
					if (strncmp(o->name, a + 2, len) == 0) {
						if (o->name[len] == '\0') {
							hit = o;
							n = 1;
							goto found;
						}
						hit = o;
						n++;
					}
		found:
			if (n == 1 && hit->arg && eq == NULL)
				i++;
			continue;
		}
		for (j = 1; a[j]; j++) {
			hit = NULL;
			for (t = 0; t < 2 && hit == NULL; t++)
				for (o = tables[t]; o->name; o++)
					if (o->short_name == a[j]) {
						hit = o;
						break;
					}
			if (hit && hit->arg) {
				if (a[j + 1] == '\0')
					i++;
				break;
			}
		}
	}
	return NULL;
}

int
parse_options(const struct command *cmd, int argc, char **argv,
    struct mq_global *g, option_fn *fn, void *ctx)
{
	int i, n = 1;

	if (cmd->flags & CMD_MAIN)
		command_after_options = command_named(cmd, argc, argv);
	g->queue_list = (cmd->flags & CMD_QUEUE_LIST) != 0;
	for (i = 1; i < argc; i++) {
		char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {	/* "-" is an operand */
			if (cmd->flags & CMD_POSIX)
				break;
			argv[n++] = a;
		} else if (a[1] == '-') {
			i = long_option(cmd, argc, argv, i, g, fn, ctx);
		} else {
			i = short_options(cmd, argc, argv, i, g, fn, ctx);
		}
	}
	while (i < argc)
		argv[n++] = argv[i++];
	argv[n] = NULL;
	return n - 1;
}
