/*
 * machine.c - the machine block of a run: what LKP prints as "test machine"
 * in its reports (model, CPUs, sockets, memory), read from /proc and /sys.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/host/machine.h"
#include "collectors/parse/parse.h"
#include "collectors/host/proc.h"

size_t machine_name_clean(const char *src, char *dst, size_t dstsz)
{
	size_t o = 0;

	for (; *src && o + 1 < dstsz && o < MACHINE_NAME_MAX; src++) {
		unsigned char ch = (unsigned char)*src;
		dst[o++] = (char)(isalnum(ch) || ch == '.' || ch == '_' || ch == '-' ? ch : '-');
	}
	dst[o] = '\0';
	return o;
}

static void read_cpuinfo(struct machine_facts *m)
{
	struct buf p = BUF_INIT;
	char *text, *line;
	long ids[1024];
	size_t nids = 0, len;
	struct lines it;

	buf_printf(&p, "%s/cpuinfo", root_proc());
	text = read_file(buf_str(&p), 64u << 20, &len);
	buf_release(&p);
	if (!text)
		return;
	lines_init(&it, text, len);
	while ((line = lines_next(&it))) {
		char *colon = strchr(line, ':'), *key, *val;
		int64_t id;

		if (!colon)
			continue;
		*colon = '\0';
		key = str_trim(line);
		val = str_trim(colon + 1);
		if (!strcmp(key, "processor")) {
			m->nr_cpus++;
		} else if (!strcmp(key, "model name") && !m->cpu_model[0]) {
			snprintf(m->cpu_model, sizeof(m->cpu_model), "%s", val);
		} else if (!strcmp(key, "physical id") && !cparse_int64(val, 0, 1 << 20, &id)) {
			size_t i;
			for (i = 0; i < nids && ids[i] != id; i++)
				;
			if (i == nids && nids < sizeof(ids) / sizeof(ids[0]))
				ids[nids++] = id;
		}
	}
	m->sockets = nids ? (long)nids : (m->nr_cpus ? 1 : 0);
	lines_release(&it);
	free(text);
}

static long count_nodes(void)
{
	struct buf p = BUF_INIT;
	struct dirent *e;
	long n = 0;
	DIR *d;

	buf_printf(&p, "%s/devices/system/node", root_sys());
	d = opendir(buf_str(&p));
	buf_release(&p);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		const char *s = e->d_name;
		if (strncmp(s, "node", 4) || !s[4])
			continue;
		for (s += 4; isdigit((unsigned char)*s); s++)
			;
		if (!*s)
			n++;
	}
	closedir(d);
	return n;
}

int machine_facts_read(struct machine_facts *m, const char *name)
{
	char host[256] = "";
	struct buf p = BUF_INIT;
	json_t *mem;

	memset(m, 0, sizeof(*m));
	if (!name || !*name) {
		if (gethostname(host, sizeof(host) - 1))
			snprintf(host, sizeof(host), "localhost");
		name = host;
	}
	if (!machine_name_clean(name, m->name, sizeof(m->name)))
		return -1;
	read_cpuinfo(m);
	buf_printf(&p, "%s/meminfo", root_proc());
	mem = proc_kv_read(buf_str(&p));
	buf_release(&p);
	if (json_object_get(mem, "MemTotal"))
		m->memory_mb = (long)(json_number_value(json_object_get(mem, "MemTotal")) / 1024);
	json_decref(mem);
	m->numa_nodes = count_nodes();
	return 0;
}

json_t *machine_json(const struct machine_facts *m)
{
	json_t *o = json_object(), *model = m->cpu_model[0] ? json_string(m->cpu_model) : NULL;

	json_object_set_new(o, "name", json_string(m->name));
	if (model)
		json_object_set_new(o, "cpu_model", model);
	if (m->nr_cpus)
		json_object_set_new(o, "nr_cpus", json_integer(m->nr_cpus));
	if (m->sockets)
		json_object_set_new(o, "sockets", json_integer(m->sockets));
	if (m->memory_mb)
		json_object_set_new(o, "memory_mb", json_integer(m->memory_mb));
	if (m->numa_nodes)
		json_object_set_new(o, "numa_nodes", json_integer(m->numa_nodes));
	return o;
}
