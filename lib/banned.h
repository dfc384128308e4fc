/*
 * banned.h - calls that overflow buffers or hide errors, made compile errors.
 * Included by util.h, so by every server, api and collector file.
 */
#ifndef KPERF_BANNED_H
#define KPERF_BANNED_H

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef atoi
#define atoi(x) BANNED(atoi)
#undef atol
#define atol(x) BANNED(atol)
#undef gets
#define gets(x) BANNED(gets)

#endif
