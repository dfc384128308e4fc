/*
 * test_hostile_raw.c - malformed HTTP written byte by byte on a raw socket
 * (what libcurl will not send): bad request lines and headers, lying or
 * contradictory Content-Length, broken chunking. libmicrohttpd answers most
 * of them itself; none may store anything or take kperfd down.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/integration/hostile.h"

static struct kperfd K;
static PGconn *db;

static void setup(void)
{
	kperfd_start(&K, NULL);
	db = harness_db(&K);
}

static void teardown(void)
{
	PQfinish(db);
	kperfd_stop(&K);
}

struct raw_row {
	const char *name;
	const char *bytes;
	int status[3]; /* -1: the connection closed without an answer */
};

/* clang-format off */
#define POST_HEAD                                                                           \
	"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"     \
	"Authorization: Bearer " TOKEN_COLLECTOR "\r\nConnection: close\r\n"

static const struct raw_row raw_rows[] = {
	{"header line without a colon",
	 "GET /healthz HTTP/1.1\r\nHost: x\r\nBadHeader\r\nConnection: close\r\n\r\n", {400}},
	{"request line of garbage", "GARBAGE\r\n\r\n", {400, -1}},
	{"HTTP/0.9 request", "GET /healthz\r\n\r\n", {400, -1}},
	{"HTTP/2.0 on the HTTP/1.1 port", "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", {505}},
	{"Content-Length -1", POST_HEAD "Content-Length: -1\r\n\r\n", {400}},
	{"Content-Length 10^23", POST_HEAD "Content-Length: 100000000000000000000000\r\n\r\n",
	 {413, 400}},
	{"Content-Length 999,999,999 and no body", POST_HEAD "Content-Length: 999999999\r\n\r\n",
	 {413}},
	{"Content-Length and chunked together",
	 POST_HEAD "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
	 {400}},
	{"two different Content-Lengths",
	 POST_HEAD "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}x",
	 {400}},
	{"chunk size zz",
	 POST_HEAD "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", {400}},
	{"chunk size past 2^64",
	 POST_HEAD "Transfer-Encoding: chunked\r\n\r\nfffffffffffffffffffff\r\n{}\r\n0\r\n\r\n",
	 {413, 400}},
};
/* clang-format on */

/* Send bytes on a fresh connection; the answer's status, or -1 when none came. */
static int raw_send(const char *name, const char *bytes)
{
	struct sockaddr_in a;
	struct timeval tv = {10, 0};
	char out[4096];
	size_t n = 0;
	ssize_t got;
	int fd = socket(AF_INET, SOCK_STREAM, 0), status = -1;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)K.port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0, "%s: connect", name);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	send(fd, bytes, strlen(bytes), MSG_NOSIGNAL);
	out[0] = '\0';
	while (n < sizeof(out) - 1 && (got = recv(fd, out + n, sizeof(out) - 1 - n, 0)) > 0) {
		n += (size_t)got;
		out[n] = '\0';
		if (strstr(out, "\r\n\r\n"))
			break;
	}
	close(fd);
	if (sscanf(out, "HTTP/1.%*d %d", &status) != 1)
		status = -1;
	return status;
}

Test(hostile, raw_http, .init = setup, .fini = teardown, .timeout = 120)
{
	size_t n = sizeof(raw_rows) / sizeof(raw_rows[0]);
	struct counts before, after;

	for (size_t k = 0; k < n; k++) {
		const struct raw_row *w = &raw_rows[k];
		int status, ok = 0;

		counts_take(db, &before);
		status = raw_send(w->name, w->bytes);
		for (int i = 0; i < 3 && w->status[i]; i++)
			ok |= status == w->status[i];
		cr_expect(ok, "%s: status %d, expected %d", w->name, status, w->status[0]);
		counts_take(db, &after);
		counts_expect(w->name, &before, &after, NULL);
	}
	cr_log_info("hostile/raw_http: %zu rows", n);
	hostile_expect_healthy(&K, "after the raw requests");
}
