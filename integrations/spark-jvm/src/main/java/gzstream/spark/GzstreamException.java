package gzstream.spark;

/**
 * gzstream failed, or could not be run. The message is gzstream's own line on standard error
 * (for example {@code gzstream: logs.gz.gzidx: the index does not match logs.gz ...}), or says
 * which executable could not be started and why.
 *
 * <p>Thrown on the driver while Spark plans a query (a stale or foreign index, a file that cannot
 * be read) and in a task when gzstream exits non-zero (corrupt data, a file changed since the
 * plan). Unchecked, because Spark's connector interfaces declare no checked exception for
 * planning; Spark reports it with the query's or the task's failure.
 */
public final class GzstreamException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public GzstreamException(String message) {
        super(message);
    }

    public GzstreamException(String message, Throwable cause) {
        super(message, cause);
    }
}
