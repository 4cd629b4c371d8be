package gzstream.spark;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The rows of one split: runs {@code gzstream unpack -c -p T --offset N --length M --whole-lines}
 * as a child process and cuts its standard output into lines, one row each.
 *
 * <p>The line rule is gzstream's {@code --whole-lines} (docs/spark.md): {@code \n} ends a line
 * and is dropped; a {@code \r} before it is a byte of the line and is kept; a final line without
 * {@code \n} is a line; no output is no rows. The bytes are not decoded or checked as UTF-8, as
 * {@code spark.read.text} does not.
 *
 * <p>Buffers: one byte array, 1 MiB to start, reused for every line; a line longer than the
 * array doubles it until the line fits (a task then holds about twice its longest line). The row
 * and the {@link UTF8String} it returns point into the array and are valid until the next call
 * to {@link #next()}, as Spark's row readers allow (Spark copies a row it keeps).
 *
 * <p>The child: its exit status is checked once its output has ended; non-zero fails the task
 * with gzstream's line on standard error (corrupt data, a file or index changed since the plan).
 * {@link #close()} kills a child still running (a {@code limit} met, a task cancelled) and
 * always waits for it and removes the file that held its standard error. Ownership: the reader
 * owns the child, its pipe and that file. Not thread-safe: one task's thread calls it.
 */
final class WholeLinesReader implements PartitionReader<InternalRow> {
    static final int FIRST_BUFFER_SIZE = 1 << 20;

    /** Reads 8 bytes of an array at once, to look for {@code \n} a word at a time. */
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long NEWLINES = 0x0a0a0a0a0a0a0a0aL;
    private static final long LOW_BITS = 0x0101010101010101L;
    private static final long HIGH_BITS = 0x8080808080808080L;

    private final GzipSplit split;
    private final File errors;
    private final Process child;
    private final InputStream output;
    private final GenericInternalRow row = new GenericInternalRow(new Object[1]);

    private byte[] buffer = new byte[FIRST_BUFFER_SIZE];
    /** Bytes [0, filled) of the buffer hold output; [lineStart, filled) is not yet returned. */
    private int filled;
    private int lineStart;
    /** No {@code \n} in [lineStart, scanned): where the search for the next one resumes. */
    private int scanned;
    private boolean outputEnded;
    private boolean finished;

    /**
     * Starts gzstream for {@code split}, decoding on {@code threads} threads ({@code null}:
     * gzstream's default).
     *
     * @throws GzstreamException when gzstream cannot be started
     */
    WholeLinesReader(String binary, GzipSplit split, Integer threads) {
        this.split = split;
        this.errors = Gzstream.errorFile();
        Process started;
        try {
            started = Gzstream.start(Gzstream.unpackArguments(binary, split, threads), errors);
        } catch (RuntimeException error) {
            errors.delete();
            throw error;
        }
        child = started;
        output = child.getInputStream();
    }

    /**
     * Moves to the next line.
     *
     * @return false after the last line, once gzstream has exited with status 0
     * @throws GzstreamException with gzstream's message when it exits non-zero
     * @throws IOException when its output cannot be read
     */
    @Override
    public boolean next() throws IOException {
        while (true) {
            int newline = indexOfNewline(buffer, scanned, filled);
            if (newline >= 0) {
                row.update(0, UTF8String.fromBytes(buffer, lineStart, newline - lineStart));
                lineStart = newline + 1;
                scanned = lineStart;
                return true;
            }
            scanned = filled;
            if (outputEnded) {
                if (lineStart < filled) {
                    row.update(0, UTF8String.fromBytes(buffer, lineStart, filled - lineStart));
                    lineStart = filled;
                    return true;
                }
                finish();
                return false;
            }
            fill();
        }
    }

    @Override
    public InternalRow get() {
        return row;
    }

    /** Reads more output behind the unfinished line, first moving that line to the front. */
    private void fill() throws IOException {
        if (lineStart > 0) {
            System.arraycopy(buffer, lineStart, buffer, 0, filled - lineStart);
            filled -= lineStart;
            scanned -= lineStart;
            lineStart = 0;
        }
        if (filled == buffer.length) {
            if (buffer.length > Integer.MAX_VALUE / 2) {
                throw new IOException(split.file() + ": a line at plain offset " + split.offset()
                    + " or after is longer than 1 GiB, more than one row can hold");
            }
            byte[] larger = new byte[buffer.length * 2];
            System.arraycopy(buffer, 0, larger, 0, filled);
            buffer = larger;
        }
        int count = output.read(buffer, filled, buffer.length - filled);
        if (count < 0) {
            outputEnded = true;
        } else {
            filled += count;
        }
    }

    /** Waits for the child that closed its output, and fails on a non-zero exit status. */
    private void finish() throws IOException {
        if (finished) {
            return;
        }
        int status;
        try {
            status = child.waitFor();
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for gzstream", interrupted);
        }
        finished = true;
        if (status != 0) {
            throw new GzstreamException(Gzstream.failureMessage(errors, status));
        }
    }

    /**
     * Kills the child if it still runs, waits for it, and removes its standard error file.
     * Called by Spark when the task ends, also early; calling it again does nothing.
     */
    @Override
    public void close() throws IOException {
        try {
            if (child.isAlive()) {
                child.destroyForcibly();
            }
            boolean interrupted = false;
            while (true) {
                try {
                    child.waitFor();
                    break;
                } catch (InterruptedException again) {
                    // A cancelled task is interrupted; the child is dying, so wait it out.
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            output.close();
        } finally {
            errors.delete();
        }
    }

    /**
     * The index of the first {@code \n} in {@code bytes[from, to)}, or -1: eight bytes at a time
     * (a byte of {@code word ^ NEWLINES} is 0 where a {@code \n} was; {@code (x - 0x01..) & ~x &
     * 0x80..} marks the lowest such byte exactly), then the tail one at a time.
     */
    static int indexOfNewline(byte[] bytes, int from, int to) {
        int index = from;
        for (; index + Long.BYTES <= to; index += Long.BYTES) {
            long word = (long) LONGS.get(bytes, index) ^ NEWLINES;
            long found = (word - LOW_BITS) & ~word & HIGH_BITS;
            if (found != 0) {
                return index + (Long.numberOfTrailingZeros(found) >>> 3);
            }
        }
        for (; index < to; index++) {
            if (bytes[index] == '\n') {
                return index;
            }
        }
        return -1;
    }
}
