/*
 * completion/operands.c: what the scripts offer for a value or an
 * operand, read from the tables the commands parse and print their
 * usage with: an option's placeholder ("first|random": those words) and
 * a command's operands (its usage line's, "QUEUE", "[COMMAND]",
 * "apply FILE", "ls | run NAME"), and what narrows a command's usage
 * forms (its options of some forms only, the words its forms begin
 * with). So a command's operands are offered where it takes them and
 * nowhere else, its options only while a form that takes them is still
 * possible, and no list of values is written twice.
 */
#include <stdlib.h>
#include <string.h>

#include "completion.h"

/* The placeholders of operands that something completes; any other
 * (ID, RECEIPT, PAYLOAD) is taken but offers nothing. */
static const struct {
	const char *name;
	enum complete kind;
} placeholders[] = {
	{ "QUEUE", COMPLETE_QUEUE },
	{ "FILE", COMPLETE_FILE },
	{ "NAME", COMPLETE_SCHEDULE },	/* mq schedule run|rm NAME */
	{ "CMD", COMPLETE_PROGRAM },	/* mq work CMD [ARG...] */
	{ "ARG", COMPLETE_FILE },
	{ "COMMAND", COMPLETE_COMMAND },	/* mq help [COMMAND] */
};

/* s[0..len) as fixed words (space-separated, into words) if it is one
 * or several lowercase words ("ls", "bash|zsh|fish"): 1, else 0 */
static int
fixed_words(const char *s, size_t len, char *words, size_t size)
{
	size_t i;

	if (len == 0 || len >= size || !((s[0] >= 'a' && s[0] <= 'z') ||
	    (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' &&
		    s[i] <= '9') || s[i] == '-' || s[i] == '|'))
			return 0;
	for (i = 0; i < len; i++)
		words[i] = s[i] == '|' ? ' ' : s[i];
	words[len] = '\0';
	return 1;
}

enum complete
value_kind(const struct opt *o, char *words, size_t size)
{
	*words = '\0';
	if (o->arg && strchr(o->arg, '|') &&
	    fixed_words(o->arg, strlen(o->arg), words, size))
		return COMPLETE_WORDS;
	if (o->complete == COMPLETE_WORD_LIST && o->words) {
		snprintf(words, size, "%s", o->words);
		return COMPLETE_WORD_LIST;
	}
	return o->complete;
}

/* The slots already given to fn for this command ("N:LEAD"): the first
 * one said stands (a second form with the same operand says it again) */
struct said {
	char keys[16][48];
	int n;
};

static void
say_slot(FILE *f, const struct command *c, struct said *s, const char *n,
    const char *lead, enum complete k, const char *words, slot_fn *fn)
{
	char key[48];
	int i;

	snprintf(key, sizeof key, "%s:%s", n, lead);
	for (i = 0; i < s->n; i++)
		if (strcmp(s->keys[i], key) == 0)
			return;
	if (s->n < 16)
		snprintf(s->keys[s->n++], sizeof s->keys[0], "%s", key);
	fn(f, c, n, lead, k, words);
}

/* One alternative of a form, s[0..len): its operands in order */
static void
alternative(FILE *f, const struct command *c, struct said *said,
    const char *s, size_t len, slot_fn *fn)
{
	const char *end = s + len, *t, *name;
	char lead[32] = "*", words[160], n[16];
	size_t tl, nl, i;
	int idx = 0, rest;
	enum complete k;

	while (s < end) {
		while (s < end && *s == ' ')
			s++;
		for (t = s; t < end && *t != ' '; t++)
			;
		tl = (size_t)(t - s);
		name = s;
		s = t;
		if (tl == 0 || (tl == 2 && strncmp(name, "--", 2) == 0))
			continue;
		if (*name == '[') {
			name++;
			tl -= 2;	/* "[X]" */
		}
		rest = tl > 3 && strncmp(name + tl - 3, "...", 3) == 0;
		nl = rest ? tl - 3 : tl;
		if (fixed_words(name, nl, words, sizeof words)) {
			k = COMPLETE_WORDS;
			/* the first operand says which operands follow */
			if (idx == 0 && !memchr(name, '|', nl) && nl < sizeof lead)
				snprintf(lead, sizeof lead, "%.*s", (int)nl, name);
		} else {
			k = COMPLETE_NONE;
			for (i = 0; i < sizeof placeholders / sizeof *placeholders; i++)
				if (strlen(placeholders[i].name) == nl &&
				    strncmp(placeholders[i].name, name, nl) == 0)
					k = placeholders[i].kind;
		}
		if (idx == 0 && k == COMPLETE_WORDS)
			;	/* said for all alternatives at once */
		else {
			snprintf(n, sizeof n, rest ? "*" : "%d", idx);
			say_slot(f, c, said, n, idx == 0 ? "*" : lead, k, words,
			    fn);
		}
		idx++;
	}
}

/* The fixed words the alternatives of c's forms begin with ("apply",
 * "ls", "run", "rm", "fire"), each once, in order, with the forms (bits)
 * each begins */
struct first_words {
	char word[16][32];
	unsigned forms[16];
	int n;
};

static void
first_words(const struct command *c, struct first_words *fw)
{
	char words[160], *w, *sp;
	const char *s, *bar, *t;
	int k, i;

	fw->n = 0;
	for (k = 0; k < FORMS_MAX && c->operands[k]; k++)
		for (s = c->operands[k]; *s; s = bar ? bar + 3 : s + strlen(s)) {
			bar = strstr(s, " | ");
			while (*s == ' ' || *s == '[')
				s++;
			for (t = s; *t && *t != ' ' && *t != ']' && (!bar ||
			    t < bar); t++)
				;
			if (!fixed_words(s, (size_t)(t - s), words,
			    sizeof words))
				continue;
			for (w = words; w; w = sp) {
				if ((sp = strchr(w, ' ')) != NULL)
					*sp++ = '\0';
				for (i = 0; i < fw->n &&
				    strcmp(fw->word[i], w) != 0; i++)
					;
				if (i == fw->n && (fw->n == 16 ||
				    strlen(w) >= sizeof fw->word[0]))
					continue;
				if (i == fw->n) {
					strcpy(fw->word[i], w);
					fw->forms[fw->n++] = 0;
				}
				fw->forms[i] |= FORM(k);
			}
		}
}

void
each_operand(FILE *f, const struct command *c, slot_fn *fn)
{
	struct said said;
	struct first_words fw;
	char first[160] = "";
	const char *s, *bar;
	size_t len;
	int k;

	said.n = 0;
	/* the fixed first words of every alternative, offered together */
	first_words(c, &fw);
	for (k = 0; k < fw.n; k++)
		if (strlen(first) + strlen(fw.word[k]) + 2 < sizeof first) {
			if (*first)
				strcat(first, " ");
			strcat(first, fw.word[k]);
		}
	if (*first)
		say_slot(f, c, &said, "0", "*", COMPLETE_WORDS, first, fn);
	for (k = 0; k < FORMS_MAX && c->operands[k]; k++)
		for (s = c->operands[k]; *s; s += len) {
			bar = strstr(s, " | ");
			len = bar ? (size_t)(bar - s) : strlen(s);
			alternative(f, c, &said, s, len, fn);
			if (bar)
				len += 3;
		}
}

/* The forms of c (bits) */
static unsigned
all_forms(const struct command *c)
{
	unsigned all = 0;
	int k;

	for (k = 0; k < FORMS_MAX && c->operands[k]; k++)
		all |= FORM(k);
	return all;
}

/* The forms of c (bits) whose first operand is not a fixed word (a
 * PAYLOAD, an ID...): any word there may be one */
static unsigned
free_first(const struct command *c)
{
	char words[160];
	const char *s, *t;
	unsigned free = 0;
	int k;

	for (k = 0; k < FORMS_MAX && c->operands[k]; k++) {
		for (s = c->operands[k]; *s == ' ' || *s == '['; s++)
			;
		for (t = s; *t && *t != ' ' && *t != ']'; t++)
			;
		if (t > s && !fixed_words(s, (size_t)(t - s), words,
		    sizeof words))
			free |= FORM(k);
	}
	return free;
}

void
each_forms(FILE *f, forms_fn *fn)
{
	const struct command *c;
	const struct opt *o;
	struct first_words fw;
	char key[40], word[40], shrt[4];
	unsigned free;
	size_t i;
	int k;

	for (i = 0, c = mq_main; c; c = commands[i++]) {
		for (o = c->opts; o->name; o++) {
			if (o->forms == 0 || (o->flags & OPT_HIDDEN))
				continue;
			snprintf(key, sizeof key, "--%s", o->name);
			snprintf(shrt, sizeof shrt, "-%c", o->short_name);
			fn(f, c, key, o->short_name ? shrt : NULL, o->forms);
		}
		/* one form: its words narrow nothing */
		if (c->operands[1] == NULL)
			continue;
		first_words(c, &fw);
		for (k = 0; k < fw.n; k++) {
			snprintf(word, sizeof word, "=%s", fw.word[k]);
			fn(f, c, word, NULL, fw.forms[k]);
		}
		/* any other first operand: the forms that take one that is
		 * not a fixed word (after the fixed words: the shells take
		 * the first pattern that matches); mq push PAYLOAD leaves
		 * the stream form (--lines, -0), which takes none */
		if ((free = free_first(c)) != 0 && free != all_forms(c))
			fn(f, c, "=*", NULL, free);
	}
}
