/*
 * top/term.c: part of mq top (mq-top(1)): the terminal: the alternate
 * screen and the key settings, given back on every way out; the signals
 * through a self-pipe; the wait between refreshes, for the time, a key,
 * a resize or a signal; the window's size.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "top.h"

/* The terminal as mq top found it, for restore(): a global, because
 * exit() reaches only functions without arguments. */
static struct termios saved_tio;
static int tio_changed, screen_on;

/* The self-pipe: the signals reach the loop through it while it waits
 * (wait_until); a stopping one that comes while mq top reads the server
 * (which may hang for as long as the read timeout) ends it there and
 * then, the terminal given back first, with what is safe in a handler. */
static int sig_fd[2] = { -1, -1 };
static volatile sig_atomic_t waiting;
static int int_quits;	/* on a terminal, Ctrl-C quits (status 0) */
static const char leave[] = "\033[?1049l\033[?25h";

static void
on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	if (!waiting && (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)) {
		if (tio_changed)
			tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_tio);
		if (screen_on)
			(void)!write(STDOUT_FILENO, leave, sizeof leave - 1);
		_exit(sig == SIGINT && int_quits ? 0 : 128 + sig);
	}
	(void)!write(sig_fd[1], &b, 1);
	errno = saved;
}

/* Leaves the alternate screen, shows the cursor, and gives the terminal
 * back its settings; does nothing twice. */
void
restore(void)
{
	if (tio_changed)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_tio);
	tio_changed = 0;
	if (screen_on) {
		fflush(stdout);
		(void)!write(STDOUT_FILENO, leave, sizeof leave - 1);
	}
	screen_on = 0;
}

/* The alternate screen, the cursor hidden, keys one by one without
 * echo (Ctrl-C still a SIGINT). */
void
enter_screen(void)
{
	static const char enter[] = "\033[?1049h\033[?25l";
	static int registered;
	struct termios t;

	if (!registered++)
		atexit(restore);
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
		t = saved_tio;
		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		t.c_cc[VMIN] = 1;
		t.c_cc[VTIME] = 0;
		if (tcsetattr(STDIN_FILENO, TCSADRAIN, &t) == 0)
			tio_changed = 1;
	}
	screen_on = 1;
	(void)!write(STDOUT_FILENO, enter, sizeof enter - 1);
}

void
suspend(void)
{
	struct sigaction sa, old;

	restore();
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTSTP, &sa, &old);
	raise(SIGTSTP);		/* stopped here until SIGCONT */
	sigaction(SIGTSTP, &old, NULL);
	enter_screen();
}

void
catch_signals(int tty)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGWINCH,
	    SIGTSTP };
	struct sigaction sa;
	size_t i;

	int_quits = tty;
	if (pipe(sig_fd) != 0) {
		say(&top_command, "pipe: %s", strerror(errno));
		exit(EX_OSERR);
	}
	for (i = 0; i < 2; i++) {
		fcntl(sig_fd[i], F_SETFL, O_NONBLOCK);
		fcntl(sig_fd[i], F_SETFD, FD_CLOEXEC);
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;	/* the client library's reads go on */
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (tty || (sigs[i] != SIGWINCH && sigs[i] != SIGTSTP))
			catch_signal(sigs[i], &sa);
}

/* Waits until deadline (mq_now_us()); keys from stdin if *keys. Returns
 * W_TIME, W_QUIT, W_RESIZE or the number of a stopping signal. */
int
wait_until(int64_t deadline, int *keys)
{
	struct pollfd p[2];
	unsigned char b;
	int64_t left;
	char k;
	int r;

	for (;;) {
		if ((left = deadline - mq_now_us()) <= 0)
			return W_TIME;
		p[0].fd = sig_fd[0];
		p[0].events = POLLIN;
		p[1].fd = *keys ? STDIN_FILENO : -1;
		p[1].events = POLLIN;
		waiting = 1;
		/* a signal that came before this wait is in the pipe */
		r = poll(p, 2, (int)((left + 999) / 1000));
		waiting = 0;
		if (r <= 0)
			continue;
		if ((p[0].revents & POLLIN) && read(sig_fd[0], &b, 1) == 1)
			return b == SIGWINCH ? W_RESIZE :
			    b == SIGTSTP ? W_SUSPEND : b;
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			/* stdin ended: no more keys, the rest by signals */
			if (read(STDIN_FILENO, &k, 1) != 1)
				*keys = 0;
			else if (k == 'q' || k == 'Q')
				return W_QUIT;
		}
	}
}

/* The window's size into fr (on a terminal). */
void
measure(struct top_frame *fr)
{
	struct winsize ws;

	fr->width = 80;
	fr->height = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
		fr->width = ws.ws_col;
		fr->height = ws.ws_row;
	}
	/* the last line stays empty: a newline there would scroll */
	fr->height = fr->height > 1 ? fr->height - 1 : 1;
}
