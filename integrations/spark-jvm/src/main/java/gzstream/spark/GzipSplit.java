package gzstream.spark;

import java.io.Serializable;
import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One task's share of one file: the lines that start in plain bytes
 * [{@code offset}, {@code offset + length}), as {@code gzstream index --plan} cut it on the
 * driver. Sent to the executor by Java serialization; immutable.
 *
 * @param file the .gz file, an absolute local path that every executor must see
 * @param offset plain (uncompressed) bytes from the file's start, at least 0
 * @param length plain bytes, or -1 for to the end of the file
 * @param index the index the plan was made from, or {@code null} (a file read whole); passed to
 *     unpack so that every task reads through the very index the driver checked
 */
public record GzipSplit(String file, long offset, long length, String index) implements InputPartition, Serializable {
    private static final long serialVersionUID = 1L;
}
