/* test_idmap.c - ids to pointers: found after growing, replaced, absent. */
#include <criterion/criterion.h>

#include "lib/idmap.h"

Test(idmap, put_get_replace_and_grow)
{
	struct idmap m = {0};
	static int vals[3];

	cr_expect_null(idmap_get(&m, 1)); /* empty: no table yet */
	for (long id = 1; id <= 5000; id++)
		idmap_put(&m, id * 7, &vals[id % 3]);
	cr_expect_eq(m.len, 5000);
	for (long id = 1; id <= 5000; id++)
		cr_assert_eq(idmap_get(&m, id * 7), &vals[id % 3], "id %ld", id * 7);
	cr_expect_null(idmap_get(&m, 8));
	idmap_put(&m, 7, &vals[2]); /* replaced, not added */
	cr_expect_eq(idmap_get(&m, 7), &vals[2]);
	cr_expect_eq(m.len, 5000);
	idmap_release(&m);
	cr_expect_null(idmap_get(&m, 7));
}
