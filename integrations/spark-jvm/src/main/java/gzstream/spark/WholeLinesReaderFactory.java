package gzstream.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;

/**
 * Sent to the executors with the tasks: makes the reader of one split there, resolving the
 * gzstream executable on that machine. Immutable and serializable.
 */
final class WholeLinesReaderFactory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;

    /** The {@code gzstream} option as given, or {@code null}. */
    private final String gzstreamOption;

    WholeLinesReaderFactory(String gzstreamOption) {
        this.gzstreamOption = gzstreamOption;
    }

    /** Starts gzstream for the split; the reader owns the child from here on. */
    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        return new WholeLinesReader(Gzstream.resolveBinary(gzstreamOption), (GzipSplit) partition);
    }
}
