; ModuleID = 'ir_kernel.c'
source_filename = "ir_kernel.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@.str = private unnamed_addr constant [10 x i8] c"TypeError\00", align 1
@.str.1 = private unnamed_addr constant [23 x i8] c"square expects one int\00", align 1
@ir_table = local_unnamed_addr constant [2 x i64] [i64 7, i64 8], align 16

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(none) uwtable
define i64 @ir_mul_add(i64 noundef %0, i64 noundef %1, i64 noundef %2) local_unnamed_addr #0 {
  %4 = mul nsw i64 %1, %0
  %5 = add nsw i64 %4, %2
  ret i64 %5
}

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(none) uwtable
define noundef double @ir_scale(double noundef %0, i32 noundef %1) local_unnamed_addr #0 {
  %3 = sitofp i32 %1 to double
  %4 = fmul double %3, %0
  ret double %4
}

; Function Attrs: nounwind uwtable
define range(i32 -1, 1) i32 @__tvm_ffi_square(ptr nocapture noundef readnone %0, ptr nocapture noundef readonly %1, i32 noundef %2, ptr nocapture noundef writeonly %3) local_unnamed_addr #1 {
  %5 = icmp eq i32 %2, 1
  br i1 %5, label %6, label %9

6:                                                ; preds = %4
  %7 = load i32, ptr %1, align 8, !tbaa !4
  %8 = icmp eq i32 %7, 1
  br i1 %8, label %10, label %9

9:                                                ; preds = %6, %4
  tail call void @TVMFFIErrorSetRaisedFromCStr(ptr noundef nonnull @.str, ptr noundef nonnull @.str.1) #3
  br label %16

10:                                               ; preds = %6
  store i32 1, ptr %3, align 8, !tbaa !4
  %11 = getelementptr inbounds i8, ptr %3, i64 4
  store i32 0, ptr %11, align 4, !tbaa !9
  %12 = getelementptr inbounds i8, ptr %1, i64 8
  %13 = load i64, ptr %12, align 8, !tbaa !9
  %14 = mul nsw i64 %13, %13
  %15 = getelementptr inbounds i8, ptr %3, i64 8
  store i64 %14, ptr %15, align 8, !tbaa !9
  br label %16

16:                                               ; preds = %10, %9
  %17 = phi i32 [ -1, %9 ], [ 0, %10 ]
  ret i32 %17
}

declare void @TVMFFIErrorSetRaisedFromCStr(ptr noundef, ptr noundef) local_unnamed_addr #2

attributes #0 = { mustprogress nofree norecurse nosync nounwind willreturn memory(none) uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nounwind uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #2 = { "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cmov,+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #3 = { nounwind }

!llvm.module.flags = !{!0, !1, !2}
!llvm.ident = !{!3}

!0 = !{i32 1, !"wchar_size", i32 4}
!1 = !{i32 8, !"PIC Level", i32 2}
!2 = !{i32 7, !"uwtable", i32 2}
!3 = !{!"Debian clang version 19.1.7 (3~deb12u1)"}
!4 = !{!5, !6, i64 0}
!5 = !{!"TVMFFIAny", !6, i64 0, !7, i64 4, !7, i64 8}
!6 = !{!"int", !7, i64 0}
!7 = !{!"omnipotent char", !8, i64 0}
!8 = !{!"Simple C/C++ TBAA"}
!9 = !{!7, !7, i64 0}
