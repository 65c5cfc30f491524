/// Reports progress of long work: bytes done so far and the total.
public typealias SigningProgress = @Sendable (_ done: Int64, _ total: Int64) -> Void
