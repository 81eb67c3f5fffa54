package mcpdriver;

/**
 * A failure with its driver-protocol error kind. Throw it from a {@link DriverClient} method
 * when you know which kind applies; the driver maps other exceptions itself
 * (see {@link Driver#errorOf}).
 *
 * <ul>
 *   <li>{@code protocol}: the server answered with a JSON-RPC error (give its code);
 *   <li>{@code transport}: the connection failed (refused, HTTP error status, server exited);
 *   <li>{@code timeout}: the client's own request time-out expired;
 *   <li>{@code unsupported}: the client cannot do what was asked;
 *   <li>{@code tool}: the client's API raised a tool's isError result as an exception;
 *   <li>{@code other}: anything else (a result the client rejected, a bug).
 * </ul>
 */
public class DriverException extends Exception {
    private static final long serialVersionUID = 1L;

    public final String kind;
    /** The JSON-RPC error code, for kind {@code protocol} only; otherwise null. */
    public final Long code;

    public DriverException(String kind, Long code, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.code = code;
    }

    public static DriverException protocol(long code, String message) {
        return new DriverException("protocol", code, message, null);
    }

    public static DriverException transport(String message, Throwable cause) {
        return new DriverException("transport", null, message, cause);
    }

    public static DriverException timeout(String message) {
        return new DriverException("timeout", null, message, null);
    }

    public static DriverException unsupported(String message) {
        return new DriverException("unsupported", null, message, null);
    }

    public static DriverException tool(String message) {
        return new DriverException("tool", null, message, null);
    }

    public static DriverException other(String message, Throwable cause) {
        return new DriverException("other", null, message, cause);
    }
}
