/*
 * roles.c - decisions' roles set from metric_role.c's table, a thousand
 * (test, metric) pairs a statement.
 */
#include <stdio.h>

#include "lib/buf.h"
#include "server/db/db.h"
#include "lib/metric_role.h"
#include "server/decide/roles.h"

static const char SQL_UNCHECKED[] =
	"SELECT p.test_id, p.metric_id, t.suite, mt.name FROM (SELECT DISTINCT test_id, metric_id"
	"  FROM decision WHERE NOT role_checked LIMIT 1000) p"
	" JOIN test t ON t.id = p.test_id JOIN metric mt ON mt.id = p.metric_id";

static const char SQL_SET[] =
	"UPDATE decision d SET role = x.role, kpi = x.role = 'kpi', kpi_rank = x.kpi_rank,"
	" role_checked = true FROM jsonb_to_recordset($1::jsonb)"
	" AS x(test_id bigint, metric_id bigint, role text, kpi_rank smallint)"
	" WHERE d.test_id = x.test_id AND d.metric_id = x.metric_id AND NOT d.role_checked";

long roles_refresh(PGconn *c, char *err, size_t errlen)
{
	long total = 0;

	for (;;) {
		PGresult *r = db_exec(c, SQL_UNCHECKED, 0, NULL), *u;
		struct buf b = BUF_INIT;
		int n;

		if (!db_ok(r)) {
			snprintf(err, errlen, "reading decisions' metrics: %s", PQresultErrorMessage(r));
			PQclear(r);
			return -1;
		}
		if (!(n = PQntuples(r))) {
			PQclear(r);
			return total;
		}
		buf_putc(&b, '[');
		for (int i = 0; i < n; i++) {
			const char *metric = PQgetvalue(r, i, 3), *suite = PQgetvalue(r, i, 2);
			int rank = metric_kpi_rank(metric, suite);
			buf_printf(&b, "%s{\"test_id\":%s,\"metric_id\":%s,\"role\":\"%s\",\"kpi_rank\":",
				   i ? "," : "", PQgetvalue(r, i, 0), PQgetvalue(r, i, 1),
				   metric_role_name(metric_role(metric, suite)));
			if (rank < 0)
				buf_puts(&b, "null}");
			else
				buf_printf(&b, "%d}", rank);
		}
		buf_putc(&b, ']');
		PQclear(r);
		{
			const char *p[1] = {buf_str(&b)};
			u = db_exec(c, SQL_SET, 1, p);
		}
		buf_release(&b);
		if (!db_ok(u)) {
			snprintf(err, errlen, "setting decisions' roles: %s", PQresultErrorMessage(u));
			PQclear(u);
			return -1;
		}
		PQclear(u);
		total += n;
	}
}
