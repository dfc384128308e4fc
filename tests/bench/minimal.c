/*
 * minimal.c - the baseline of the static-asset benchmark: the least a
 * libmicrohttpd server can do to answer a GET with a file's bytes from
 * memory, with the same threading as kperfd (internal polling, epoll, a pool
 * of 4 threads per core) and the keep-alive rule of DESIGN.md (answer on the
 * second call).
 * Usage: minimal FILE PORTFILE  (listens on 127.0.0.1, a free port)
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char *data;
static size_t len;

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	static int mark;
	struct MHD_Response *r;
	enum MHD_Result rc;

	(void)cls, (void)url, (void)method, (void)version, (void)upload, (void)upload_size;
	if (!*req_cls) {
		*req_cls = &mark;
		return MHD_YES;
	}
	r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, "Content-Type", "text/javascript; charset=utf-8");
	rc = MHD_queue_response(conn, 200, r);
	MHD_destroy_response(r);
	return rc;
}

int main(int argc, char **argv)
{
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;
	FILE *f;
	struct sockaddr_in sin = {.sin_family = AF_INET};
	sigset_t set;
	int sig;

	if (argc != 3 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: minimal FILE PORTFILE\n");
		return 2;
	}
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc(len);
	if (!data || fread(data, 1, len, f) != len)
		return 1;
	fclose(f);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
			     on_request, NULL, MHD_OPTION_THREAD_POOL_SIZE,
			     (unsigned int)(4 * sysconf(_SC_NPROCESSORS_ONLN)), MHD_OPTION_SOCK_ADDR,
			     (struct sockaddr *)&sin, MHD_OPTION_END);
	if (!d || !(info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)))
		return 1;
	f = fopen(argv[2], "w");
	fprintf(f, "%u\n", info->port);
	fclose(f);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sigwait(&set, &sig);
	MHD_stop_daemon(d);
	free(data);
	return 0;
}
